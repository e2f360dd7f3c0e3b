"""Tokens and host communication in every executor: after_all / create_token, and infeed,
outfeed, send and recv through loom.host's callbacks (the spec interpreter's examples: two infeeds
read the queue in order, sends and recvs on one channel pair up in order), the arrays and configs
the callbacks see, and the errors naming the op, its location and what to register."""

from __future__ import annotations

import numpy as np
import pytest
from support.executors import EXECUTORS, module, to_numpy

import loom
import loom.host
from loom.backend.common import ArgumentError, ExecutionError

KINDS = ("infeed", "outfeed", "send", "recv")


@pytest.fixture(autouse=True)
def no_callbacks():
    """Each test starts with no callback registered and leaves none behind."""
    saved = {k: getattr(loom.host, f"register_{k}")(None) for k in KINDS}
    yield
    for k, fn in saved.items():
        getattr(loom.host, f"register_{k}")(fn)


def _run(text, *args):
    return [to_numpy(loom.execute(text, *args, executor=ex, backend=be)) for ex, be in EXECUTORS]


INFEED = module("""func.func @main() -> (tensor<2x2xi64>, tensor<2x2xi64>) {
  %t0 = stablehlo.after_all : !stablehlo.token
  %t1 = stablehlo.create_token : !stablehlo.token
  %token = stablehlo.after_all %t0, %t1 : !stablehlo.token
  %r0:2 = "stablehlo.infeed"(%token) {infeed_config = "queue"}
    : (!stablehlo.token) -> (tensor<2x2xi64>, !stablehlo.token)
  %r1:2 = "stablehlo.infeed"(%r0#1) {infeed_config = "queue"}
    : (!stablehlo.token) -> (tensor<2x2xi64>, !stablehlo.token)
  return %r0#0, %r1#0 : tensor<2x2xi64>, tensor<2x2xi64>
}""")


def test_infeed_reads_the_queue_in_order():
    for ex, be in EXECUTORS:
        queue = [np.array([[1, 2], [3, 4]]), np.array([[5, 6], [7, 8]])]
        seen = []

        def infeed(specs, config, queue=queue, seen=seen):
            seen.append((specs, config))
            return [queue.pop(0)]
        loom.host.register_infeed(infeed)
        first, second = to_numpy(loom.execute(INFEED, executor=ex, backend=be))
        np.testing.assert_array_equal(first, [[1, 2], [3, 4]])
        np.testing.assert_array_equal(second, [[5, 6], [7, 8]])
        assert seen == [([((2, 2), np.dtype(np.int64))], "queue")] * 2


def test_outfeed_writes_every_operand():
    text = module("""func.func @main(%x: tensor<2x2x2xi64>, %y: tensor<f32>) -> tensor<2x2x2xi64> {
  %token = stablehlo.after_all : !stablehlo.token
  %0 = "stablehlo.outfeed"(%x, %y, %token) {outfeed_config = "log"}
    : (tensor<2x2x2xi64>, tensor<f32>, !stablehlo.token) -> !stablehlo.token
  return %x : tensor<2x2x2xi64>
}""")
    written = []
    loom.host.register_outfeed(lambda arrays, config: written.append((arrays, config)))
    x = np.arange(1, 9).reshape(2, 2, 2)
    _run(text, x, np.float32(0.5))
    assert len(written) == len(EXECUTORS)
    for arrays, config in written:
        assert config == "log" and len(arrays) == 2
        np.testing.assert_array_equal(arrays[0], x)
        assert arrays[1] == np.float32(0.5) and arrays[1].dtype == np.float32


SEND_RECV = module("""func.func @main(%x: tensor<2x2xi64>) -> (tensor<2x2xi64>, tensor<2x2xi64>) {
  %token = stablehlo.after_all : !stablehlo.token
  %s0 = "stablehlo.send"(%x, %token) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>,
    is_host_transfer = true} : (tensor<2x2xi64>, !stablehlo.token) -> !stablehlo.token
  %c = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi64>
  %s1 = "stablehlo.send"(%c, %s0) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>,
    is_host_transfer = true} : (tensor<2x2xi64>, !stablehlo.token) -> !stablehlo.token
  %r0:2 = "stablehlo.recv"(%s1) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 3>,
    is_host_transfer = true} : (!stablehlo.token) -> (tensor<2x2xi64>, !stablehlo.token)
  %r1:2 = "stablehlo.recv"(%r0#1) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 3>,
    is_host_transfer = true} : (!stablehlo.token) -> (tensor<2x2xi64>, !stablehlo.token)
  return %r0#0, %r1#0 : tensor<2x2xi64>, tensor<2x2xi64>
}""")


def test_send_and_recv_on_one_channel_pair_up_in_order():
    channels: dict[int, list] = {}
    loom.host.register_send(lambda arrays, channel: channels.setdefault(channel, []).extend(arrays))
    loom.host.register_recv(lambda specs, channel: [channels[channel].pop(0) for _ in specs])
    for first, second in _run(SEND_RECV, np.array([[1, 2], [3, 4]])):
        np.testing.assert_array_equal(first, [[1, 2], [3, 4]])
        np.testing.assert_array_equal(second, [[5, 6], [7, 8]])
    assert channels == {1: []}


@pytest.mark.parametrize("kind,text", [("infeed", INFEED), ("send", SEND_RECV)])
def test_an_op_without_a_callback_names_itself_and_what_to_register(kind, text):
    args = [] if kind == "infeed" else [np.zeros((2, 2), np.int64)]
    for ex, be in EXECUTORS:
        with pytest.raises(ExecutionError) as info:
            loom.execute(text, *args, executor=ex, backend=be)
        message = str(info.value)
        assert f"stablehlo.{kind} (at loc(" in message and f"loom.host.register_{kind}(fn)" in message
    loom.host.register_send(lambda arrays, channel: None)
    with pytest.raises(ExecutionError, match=r"stablehlo.recv \(at loc\(.*register_recv"):
        loom.execute(SEND_RECV, np.zeros((2, 2), np.int64))


def test_arrays_that_do_not_match_the_results_are_refused():
    loom.host.register_infeed(lambda specs, config: [np.zeros((2, 2), np.float32)])
    with pytest.raises(ExecutionError, match=r"stablehlo.infeed .*float32\[2, 2\].*int64\[2, 2\]"):
        loom.execute(INFEED)
    loom.host.register_infeed(lambda specs, config: [])
    with pytest.raises(ExecutionError, match="gave 0 arrays"):
        loom.execute(INFEED, executor="interpreter")


def test_registration_returns_the_previous_callback():
    def first(specs, config):
        return []

    assert loom.host.register_infeed(first) is None
    assert loom.host.register_infeed(None) is first
    with pytest.raises(TypeError, match="register_outfeed"):
        loom.host.register_outfeed("not a function")


def test_a_token_passes_through_the_entry_function():
    """`@main` may take and return `!stablehlo.token` (JAX's ordered effects thread one through):
    the caller passes `loom.host.TOKEN` and gets it back; anything else is refused, naming the
    argument."""
    text = module("""func.func @main(%t: !stablehlo.token, %x: tensor<2xf32>) -> (!stablehlo.token, tensor<2xf32>) {
  %t1 = "stablehlo.outfeed"(%x, %t) {outfeed_config = ""} : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token
  %y = stablehlo.add %x, %x : tensor<2xf32>
  return %t1, %y : !stablehlo.token, tensor<2xf32>
}""")
    for ex, be in EXECUTORS:
        written = []
        loom.host.register_outfeed(lambda arrays, config, written=written: written.append(arrays))
        token, y = loom.execute(text, loom.host.TOKEN, np.array([1.0, 2.0], np.float32), executor=ex, backend=be)
        assert token is loom.host.TOKEN, (ex, be)
        np.testing.assert_array_equal(to_numpy(y), [2.0, 4.0])
        np.testing.assert_array_equal(written[0][0], [1.0, 2.0])
        with pytest.raises(ArgumentError, match=r"argument 0 .*expected !stablehlo.token"):
            loom.execute(text, np.zeros(2), np.zeros(2, np.float32), executor=ex, backend=be)
