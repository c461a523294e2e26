"""Devices and streams: the names, printed forms, equality and errors of MLX 0.32.4's
CPU-only Linux build (measured there; lazulite has one CPU device and no GPU)."""

import enum
import re
import threading

import pytest

import lazulite.core as mx

GPU_STREAM = re.escape("[default_stream] Cannot get gpu stream without gpu backend.")


def test_device_type_is_an_enum_with_cpu_and_gpu():
    assert issubclass(mx.DeviceType, enum.Enum)
    assert list(mx.DeviceType) == [mx.DeviceType.cpu, mx.DeviceType.gpu]
    assert mx.cpu is mx.DeviceType.cpu and mx.gpu is mx.DeviceType.gpu
    assert (mx.cpu.name, mx.cpu.value, mx.gpu.name, mx.gpu.value) == ("cpu", 0, "gpu", 1)
    assert repr(mx.cpu) == "DeviceType.cpu" and str(mx.gpu) == "DeviceType.gpu"
    assert mx.DeviceType(0) is mx.cpu and mx.DeviceType["gpu"] is mx.gpu


def test_device_objects():
    d = mx.Device(mx.cpu)
    assert repr(d) == str(d) == "Device(cpu, 0)"
    assert repr(mx.Device(mx.gpu, 1)) == "Device(gpu, 1)"
    assert d.type is mx.cpu and mx.Device(mx.gpu).type is mx.gpu
    assert d == mx.Device(mx.cpu, 0) and d == mx.cpu and mx.cpu == d
    assert d != mx.Device(mx.gpu) and d != mx.Device(mx.cpu, 1) and d != 0
    assert hash(d) == hash(mx.Device(mx.cpu, 0))
    assert mx.default_device() == d
    with pytest.raises(TypeError):
        mx.Device("cpu")


def test_streams():
    s = mx.default_stream(mx.cpu)
    assert repr(s) == f"Stream(Device(cpu, 0), {repr(s).split(', ')[-1]}"
    assert s.device == mx.Device(mx.cpu) and isinstance(s.device, mx.Device)
    assert s == mx.default_stream(mx.default_device()) == mx.default_stream(mx.Device(mx.cpu))
    a, b = mx.new_stream(mx.cpu), mx.new_stream(mx.Device(mx.cpu))
    assert a != b and a == a and hash(a) == hash(a)
    index = lambda stream: int(repr(stream).rstrip(")").split(", ")[-1])
    assert index(b) == index(a) + 1
    with pytest.raises(TypeError):
        mx.Stream(mx.cpu)


def test_thread_unsafe_streams_share_the_numbering_and_run_on_any_thread():
    index = lambda stream: int(repr(stream).rstrip(")").split(", ")[-1])
    a = mx.new_stream(mx.cpu)
    u = mx.new_thread_unsafe_stream(mx.cpu)
    b = mx.new_stream(mx.cpu)
    assert isinstance(u, mx.Stream) and u.device == mx.Device(mx.cpu)
    assert index(a) + 1 == index(u) == index(b) - 1
    results = []

    def work():
        with mx.stream(u):
            results.append(mx.add(mx.array([1, 2]), 3).tolist())

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert results == [[4, 5]]


def test_set_default_stream_and_the_stream_context():
    original = mx.default_stream(mx.cpu)
    s, t = mx.new_stream(mx.cpu), mx.new_stream(mx.cpu)
    try:
        mx.set_default_stream(s)
        assert mx.default_stream(mx.cpu) == s and mx.default_device() == mx.Device(mx.cpu)
        with mx.stream(t) as entered:
            assert entered is None
            assert mx.default_stream(mx.cpu) == t
        assert mx.default_stream(mx.cpu) == s
        with mx.stream(mx.cpu):
            assert mx.default_stream(mx.cpu) == s
        with mx.StreamContext(t):
            assert mx.default_stream(mx.cpu) == t
        assert mx.default_stream(mx.cpu) == s
        with pytest.raises(TypeError):
            mx.set_default_stream(mx.cpu)
    finally:
        mx.set_default_stream(original)


def test_each_thread_has_its_own_default_stream():
    seen = []
    worker = threading.Thread(target=lambda: seen.append(mx.default_stream(mx.cpu)))
    worker.start()
    worker.join()
    assert seen[0] != mx.default_stream(mx.cpu) and seen[0].device == mx.Device(mx.cpu)


def test_thread_local_streams():
    t = mx.new_thread_local_stream(mx.cpu)
    assert repr(t).startswith("ThreadLocalStream(Device(cpu, 0), ")
    assert t.device == mx.Device(mx.cpu) and t == t and t != mx.new_thread_local_stream(mx.cpu)
    assert repr(mx.new_thread_local_stream(mx.gpu)).startswith("ThreadLocalStream(Device(gpu, 0), ")
    assert mx.add(1, 2, stream=t).item() == 3
    with mx.stream(t):
        pass


def test_availability_and_info():
    assert mx.is_available(mx.cpu) and mx.is_available(mx.Device(mx.cpu))
    assert not mx.is_available(mx.gpu) and not mx.is_available(mx.Device(mx.gpu))
    assert not mx.is_available(mx.Device(mx.cpu, 3))
    assert (mx.device_count(mx.cpu), mx.device_count(mx.gpu)) == (1, 0)
    for wrong in (mx.Device(mx.cpu), "cpu"):
        with pytest.raises(TypeError):
            mx.device_count(wrong)
    info = mx.device_info()
    assert set(info) == {"architecture", "device_name"} and info == mx.device_info(mx.cpu)
    assert all(isinstance(v, str) and v for v in info.values())
    assert mx.device_info(mx.gpu) == {}
    assert mx.cuda.is_available() is False and mx.metal.is_available() is False
    assert mx.metal.get_active_memory is mx.get_active_memory
    assert mx.metal.device_info is mx.device_info


def test_synchronize_and_clear_streams():
    s = mx.new_stream(mx.cpu)
    assert mx.synchronize() is None and mx.synchronize(s) is None and mx.synchronize(mx.cpu) is None
    mx.clear_streams()
    assert mx.add(1, 1, stream=s).item() == 2
    with pytest.raises(ValueError, match=GPU_STREAM):
        mx.synchronize(mx.gpu)


def test_the_gpu_raises_mlx_errors():
    with pytest.raises(ValueError, match=GPU_STREAM):
        mx.default_stream(mx.gpu)
    with pytest.raises(ValueError, match=r"\[set_default_device\] Cannot set gpu device without gpu backend."):
        mx.set_default_device(mx.gpu)
    with pytest.raises(ValueError, match=r"\[new_stream\] Cannot make gpu stream without gpu backend."):
        mx.new_stream(mx.gpu)
    with pytest.raises(ValueError, match=r"\[new_thread_unsafe_stream\] Cannot make gpu stream without gpu backend."):
        mx.new_thread_unsafe_stream(mx.gpu)
    with pytest.raises(ValueError, match=GPU_STREAM):
        mx.stream(mx.gpu)
    assert mx.default_device() == mx.Device(mx.cpu)
    mx.set_default_device(mx.cpu)
    assert mx.default_device() == mx.Device(mx.cpu)


def test_missing_cpu_devices_raise():
    with pytest.raises(IndexError):
        mx.default_stream(mx.Device(mx.cpu, 2))
    with pytest.raises(IndexError):
        mx.add(1, 2, stream=mx.Device(mx.cpu, 3))
    with pytest.raises(IndexError):
        mx.set_default_device(mx.Device(mx.cpu, 1))
    assert mx.default_device() == mx.Device(mx.cpu)


@pytest.mark.parametrize(
    "call",
    [
        lambda s: mx.add(1, 2, stream=s),
        lambda s: mx.array([1.0]).sqrt(stream=s),
        lambda s: mx.array([1.0]).astype(mx.int32, stream=s),
        lambda s: mx.arange(3, stream=s),
        lambda s: mx.std(mx.array([1.0, 2.0]), stream=s),
        lambda s: mx.linalg.inv(mx.eye(2), stream=s),
        lambda s: mx.random.normal((2,), stream=s),
        lambda s: mx.broadcast_arrays(mx.array(1), stream=s),
    ],
)
def test_ops_take_a_stream_or_device_and_refuse_the_gpu(call):
    for s in (None, mx.cpu, mx.Device(mx.cpu), mx.default_stream(mx.cpu), mx.new_stream(mx.cpu)):
        call(s)
    for gpu in (mx.gpu, mx.Device(mx.gpu), mx.new_thread_local_stream(mx.gpu)):
        with pytest.raises(ValueError, match=GPU_STREAM):
            call(gpu)
    with pytest.raises(TypeError):
        call("cpu")
