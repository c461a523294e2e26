"""Runs each probe line after the "#---TESTS---" marker of a script in its own process, so a crash of MLX is reported, not fatal."""
# run each t(...) of a script in an isolated subprocess
import sys, subprocess, re
src=open(sys.argv[1]).read()
head, _, body = src.partition("#---TESTS---\n")
lines=[l for l in body.splitlines() if l.strip()]
for l in lines:
    code=head+"\n"+l+"\n"
    p=subprocess.run([sys.executable,'-c',code],capture_output=True,text=True,timeout=60)
    out=p.stdout
    if p.returncode!=0 and p.returncode<0:
        out+=f"  -> CRASH (signal {-p.returncode})\n"
    elif p.returncode!=0:
        out+="  -> (exit %d) %s\n"%(p.returncode,p.stderr.strip().splitlines()[-1] if p.stderr.strip() else '')
    sys.stdout.write(out); sys.stdout.flush()
