"""The einsum_path calls checked against real MLX: subscripts and operand shapes. The
same table runs on MLX (tools/mlx_reference/einsum_path.py writes mlx_einsum_path.json)
and on lazulite (test_einsum_path.py)."""

import numpy as np

FIXED = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    (" ij , jk ,kl -> il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 40), (40, 2)]),
    ("ij,jk,kl->il", [(2, 1), (1, 4), (4, 5)]),
    ("ij,jk,kl,lm", [(2, 3), (3, 4), (4, 5), (5, 6)]),
    ("ab,bc,cd,de,ef->af", [(3, 3)] * 5),
    ("i,j,k", [(2,), (3,), (4,)]),
    ("i,j,k->", [(2,), (3,), (4,)]),
    ("ij,ij,ij->ij", [(2, 3)] * 3),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("ij", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("...ij,...jk", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(4, 2, 3), (3, 2)]),
    ("...,...", [(2, 3), (3,)]),
    ("...i,...i,...i->...", [(2, 1, 3), (4, 3), (1, 3)]),
    ("iij,jk,kl->il", [(2, 2, 3), (3, 4), (4, 5)]),
    ("Ab,bC,Cd", [(2, 3), (3, 4), (4, 5)]),
    ("ijk,jkl,klm,mn->in", [(2, 3, 4), (3, 4, 5), (4, 5, 6), (6, 2)]),
    ("ab,cd,ef,ac->bdf", [(2, 3), (4, 5), (6, 7), (2, 4)]),
    ("ea,fb,abcd,gc,hd->efgh", [(10, 10), (10, 10), (10, 10, 10, 10), (10, 10), (10, 10)]),
    ("abc,bcd,cde,dea,eab->", [(2, 3, 4), (3, 4, 5), (4, 5, 6), (5, 6, 2), (6, 2, 3)]),
    ("i,i,i,i", [(2**31 - 1,)] * 4),
    # Errors.
    ("ij,jk", []),
    ("ij,jk", [(2, 3)]),
    ("ij,", [(2, 3)]),
    ("i1", [(2, 3)]),
    ("i..j", [(2, 3)]),
    ("...i...", [(2, 3)]),
    ("ij->j->i", [(2, 3)]),
    ("ij\t,jk", [(2, 3), (3, 4)]),
    ("...ijk", [(2, 3)]),
    ("ijk", [(2, 3)]),
    ("->", [(2, 3)]),
    ("ij,jk->ii", [(2, 3), (3, 4)]),
    ("ii", [(2, 3)]),
    ("ij,ij", [(2, 3), (4, 3)]),
]


def random_cases(count=60):
    """Chains and networks of 3 to 6 operands over a few letters, with sizes that make
    ties and the memory and cost limits matter."""
    rng = np.random.default_rng(20240)
    letters = "abcdefg"
    out = []
    for _ in range(count):
        n = int(rng.integers(3, 7))
        size = {c: int(rng.choice([1, 2, 3, 4, 6])) for c in letters}
        terms = []
        for _ in range(n):
            k = int(rng.integers(1, 4))
            terms.append("".join(rng.choice(list(letters), size=k, replace=False)))
        used = sorted(set("".join(terms)))
        keep = [c for c in used if rng.random() < 0.3]
        subscripts = ",".join(terms) + ("->" + "".join(keep) if rng.random() < 0.7 else "")
        out.append((subscripts, [tuple(size[c] for c in t) for t in terms]))
    return out


CASES = FIXED + random_cases()
