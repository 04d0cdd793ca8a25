"""What every node executable shares: parameter declaration, readiness signal, and main()."""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import rclpy
from rcl_interfaces.msg import ParameterDescriptor
from rclpy._rclpy_pybind11 import RCLError
from rclpy.exceptions import InvalidParameterTypeException
from rclpy.executors import (
    ConditionReachedException,
    Executor,
    ExternalShutdownException,
    MultiThreadedExecutor,
    ShutdownException,
    SingleThreadedExecutor,
    TimeoutException,
)
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future

from cosim_validation.common.exceptions import CosimError
from cosim_validation.common.process_kernel import signal_on_parent_death
from cosim_validation.live.session.discovery_scope import join_domain_lock
from cosim_validation.live.session.node_parameters import process_peers
from cosim_validation.live.session.parameter_struct import KIND_NAMES, NodeParameterError, NodeParams
from cosim_validation.live.session.process_group import TEARDOWN_FALLBACK_S, TEARDOWN_LIMIT_S
from cosim_validation.live.session.start_gate import pass_gate

READY_DIR_ENV = "COSIM_READY_DIR"
P = TypeVar("P", bound=NodeParams)


def declare_parameters(node: Node, params: type[P]) -> P:
    """Declare the node's parameters and return their checked values.

    ``params`` is the node's struct of :mod:`cosim_validation.live.session.node_parameters`.

    Every parameter is declared by its type, not by its default: rclpy infers the type of a default value
    and ignores the descriptor's ``type`` (rclpy ``Node.declare_parameters``: "The name and type in the
    given descriptors are ignored"), so an empty list default would become BYTE_ARRAY and then refuse the
    STRING_ARRAY a params file or launch gives. A parameter nobody set then takes the declared default,
    set with its declared type; one whose default is None stays unset (None: the node reads the configuration).
    A value given for a parameter nobody declared is refused too (rclpy would ignore it silently), except the
    parameters of the nodes composed into the same process, which process-wide overrides reach as well.

    Args:
        node: The node to declare them on.
        params: The node's parameter struct (a :class:`NodeParams` subclass), whose specs give each parameter's name,
            type, default and description.

    Raises:
        NodeParameterError: A value of another type than declared, out of its range, or for an unknown name.
    """
    name = node.get_name()
    values: dict[str, Any] = {}
    for spec in params.specs():
        kind = _TYPES[spec.kind]
        descriptor = ParameterDescriptor(description=spec.description)
        try:
            parameter: Parameter[Any] = node.declare_parameter(spec.name, kind, descriptor)
        except InvalidParameterTypeException:
            expected = f"expected {KIND_NAMES[spec.kind]}, got {_given_type(node, spec.name)}"
            raise NodeParameterError(f"{params.label(spec.name, name)}: {expected}") from None
        if parameter.type_ == Parameter.Type.NOT_SET:
            if spec.default is None:
                continue
            parameter = Parameter(spec.name, kind, spec.default)
            node.set_parameters([parameter])
        value = parameter.value
        values[spec.name] = list(value) if spec.kind is list else value
    _reject_unknown(node, params)
    return params.from_values(values, name)


def _reject_unknown(node: Node, params: type[NodeParams]) -> None:
    """Raise NodeParameterError for an override no node of this process declares (unless it ignores them)."""
    if params.ignores_unknown:
        return
    shared = {s.name for peer in process_peers(params) for s in peer.specs()}
    for given in node._parameter_overrides:  # rclpy keeps what was given only here
        if node.has_parameter(given) or given in shared or given.startswith(_QOS_OVERRIDES):
            continue  # declared (also rclpy's own: use_sim_time), a peer's, or a publisher's QoS override
        raise NodeParameterError(params.unknown_message(given, node.get_name()))


_QOS_OVERRIDES = "qos_overrides."  # rclpy declares these when a publisher allows QoS overrides


def _given_type(node: Node, name: str) -> str:
    override = node._parameter_overrides.get(name)
    if override is None:
        return "a value of another type"
    return f"{override.type_.name.lower()} {override.value!r}"


# the declared type of every parameter (an empty list carries none)
_TYPES = {
    bool: Parameter.Type.BOOL,
    int: Parameter.Type.INTEGER,
    float: Parameter.Type.DOUBLE,
    str: Parameter.Type.STRING,
    list: Parameter.Type.STRING_ARRAY,
}


def progress_file(name: str) -> Path | None:
    """``COSIM_READY_DIR/<name>.progress``: a node's work counter, watched by ``cosim session`` (None if unset).

    Args:
        name: The node's name.
    """
    folder = os.environ.get(READY_DIR_ENV)
    return Path(folder, f"{name}.progress") if folder else None


def signal_ready(node: Node) -> None:
    """Tell ``cosim session`` this node is up (a file named after the node in COSIM_READY_DIR).

    Args:
        node: The node that is up; the file is named after it.
    """
    folder = os.environ.get(READY_DIR_ENV)
    if folder:
        Path(folder, node.get_name()).write_text(str(os.getpid()))
    node.get_logger().info("ready")


class PoliteMultiThreadedExecutor(MultiThreadedExecutor):
    """rclpy's MultiThreadedExecutor without its busy loop.

    rclpy (Kilted) yields a callback task that is queued in the thread pool but not started yet again on every
    pass, and the multi-threaded executor submits it again and appends it to its list of futures each time.
    While a long callback runs (a case in the controller) the main thread then spins through a list that
    grows to thousands of copies of the same task, holding the GIL, and the queued callbacks start late:
    measured in the controller, 2,000 entries for 3 distinct tasks and 65 s of CPU in a 75 s session. Here a
    task is submitted once; when the executor offers a task that is still queued, the main thread releases
    the GIL briefly instead of queueing it again.
    """

    PAUSE_S = 0.0005

    def _spin_once_impl(self, timeout_sec: Any = None, wait_condition: Callable[[], bool] = lambda: False) -> None:
        try:
            handler, _entity, _node = self.wait_for_ready_callbacks(timeout_sec, None, wait_condition)
        except (ExternalShutdownException, ShutdownException, TimeoutException, ConditionReachedException):
            return
        in_flight = self._in_flight()
        if id(handler) in in_flight:
            time.sleep(self.PAUSE_S)
        else:
            self._executor.submit(handler)
            self._futures.append(handler)
        for future in [f for f in self._futures if f.done()]:
            self._futures.remove(future)
            future.result()  # raise what the callback raised

    def _in_flight(self) -> set[int]:
        return {id(f) for f in self._futures if not f.done()}


def stop_on_signals(executor: Executor) -> Future[int]:
    """Return a future that SIGINT and SIGTERM complete from now on, waking ``executor``.

    Spin on it with ``executor.spin_until_future_complete``, which also ends when the context shuts down (a node
    that ends its own work). Install it before the node says it is ready: a signal between the two would find
    the default action and end the process without its outputs.

    In place of rclpy's signal handlers, which shut the context down from the handler: with them a node was
    seen to stay in ``rcl_wait`` for good after SIGTERM (the MoveIt stand-in, reproduced with SIGTERM 3-4 s after
    its start). Here a signal completes a future the executor spins on, so the node's outputs are closed and its
    entities destroyed while the context is still valid, and only then is it shut down.

    Python runs a signal's handler in the main thread, between any two bytecodes, also while the main thread
    holds a lock: the future's own (rclpy takes it in ``add_done_callback``, when the spin starts), so a handler
    that completed the future there waited for itself for good (seen: a recorder stopped just after it said it was
    ready, about one start in 300 on a loaded machine). So the handler does nothing but keep the default action
    away; the interpreter's C-level handler also writes the signal's number to a pipe (``signal.set_wakeup_fd``),
    and a thread of its own reads it and completes the future, which wakes the executor (a done callback that
    ``spin_until_future_complete`` adds) even if the main thread waits in the middleware for an event that does
    not come (an idle node). No timeout is used: rclpy creates a timer for every wait with one. Main thread only.

    Args:
        executor: The executor to wake when a signal comes (the one that spins on the future).
    """
    stopped: Future[int] = Future()
    watched = (signal.SIGINT, signal.SIGTERM)
    for sig in watched:
        signal.signal(sig, _leave_to_wake_thread)
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    threading.Thread(
        target=_stop_on_signal, args=(read_fd, stopped, executor, watched), daemon=True, name="signal-wake"
    ).start()
    return stopped


def _leave_to_wake_thread(_signum: int, _frame: Any) -> None:
    """The Python-level handler of SIGINT and SIGTERM in a node: nothing (see stop_on_signals)."""


def _stop_on_signal(fd: int, stopped: Future[int], executor: Executor, watched: Sequence[int]) -> None:
    """Complete ``stopped`` with the first watched signal whose number is written to ``fd``; then wake ``executor``.

    Runs in its own thread (stop_on_signals): the future's lock may be held by the main thread for a moment, never
    for good.
    """
    while data := os.read(fd, 64):
        for signum in data:
            if signum in watched and not stopped.done():
                stopped.set_result(signum)
        with contextlib.suppress(Exception):  # an executor already shut down has nothing to wake
            executor.wake()


@runtime_checkable
class HostsNodes(Protocol):
    """A node that hosts others in its process (ROS 2 composition): one executor spins them all."""

    @property
    def composed_nodes(self) -> Sequence[Node]:
        """The hosted nodes; destroyed before the host."""
        ...


@runtime_checkable
class HasOutputs(Protocol):
    """A node with outputs of its own to finish (the recorder's bag) before its entities are destroyed."""

    def close(self) -> None:
        """Finish and release the outputs."""
        ...


@runtime_checkable
class EndsItself(Protocol):
    """A node that may end its own work and says how (the test generator, when a suite cannot be run)."""

    @property
    def exit_code(self) -> int:
        """The process's exit status; 0 for success."""
        ...


def _composed(node: Node) -> Sequence[Node]:
    return node.composed_nodes if isinstance(node, HostsNodes) else ()


def run_node(factory: Callable[[], Node], args: Sequence[str] | None = None, threads: int = 2) -> int:
    """Standard node main: init, build, spin until shutdown; bad configuration is one error line, exit 1.

    A node may host others in the same process (:class:`HostsNodes`): they are spun by the same executor and
    destroyed before it; a node with outputs (:class:`HasOutputs`) closes them first. The exit code is 1 after a
    configuration error, else the node's own (:class:`EndsItself`: the test generator sets it when the suite
    could not be run), else 0.

    Args:
        factory: Builds the node, after ``rclpy.init``; a CosimError it raises is the one error line.
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
        threads: Threads of the executor: 1 a single-threaded executor, more a :class:`PoliteMultiThreadedExecutor` with
            that many.
    """
    # While it builds (loading the anatomy, building distance grids in C: seconds) SIGINT and SIGTERM keep their
    # default actions and end the process at once (it has no output to finish yet; exit status -2), also where
    # the parent left SIGINT ignored: rclpy's handlers only shut the context down, which a building node does not
    # notice. From just before it says it is ready, they end its spin (stop_on_signals); the node's outputs are
    # closed and its entities destroyed while the context is still valid, and only then is it shut down.
    # a crash in C (a segmentation fault in a physics engine or the middleware) writes every thread's Python stack
    # to the node's log before the process dies: a driver was seen to die so at start, leaving an empty log
    faulthandler.enable(file=sys.stderr, all_threads=True)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # see above; a node stopped at its gate just ends, too
    pass_gate()  # a session that started this process before choosing its domain says which one, here
    rclpy.init(args=list(args) if args is not None else sys.argv, signal_handler_options=SignalHandlerOptions.NO)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # whatever rclpy's init did
    stop_with_parent()
    _HELD.append(join_domain_lock())
    node: Node | None = None
    name = "node"
    code = 0
    try:
        node = factory()
        name = node.get_name()  # read now: a context shut down from inside the node invalidates its handle
        executor = SingleThreadedExecutor() if threads == 1 else PoliteMultiThreadedExecutor(num_threads=threads)
        executor.add_node(node)
        for composed in _composed(node):  # nodes it hosts in this process (composition)
            executor.add_node(composed)
        stopped = stop_on_signals(executor)
        signal_ready(node)
        executor.spin_until_future_complete(stopped)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RCLError:
        if rclpy.ok():
            raise
        # the context was shut down (by the node itself, ending its work) while the executor was making its wait
        # set ("failed to initialize wait set: the given context is not valid"); that is a shutdown too
    except CosimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = 1
    finally:
        if node is not None:
            if isinstance(node, HasOutputs):
                node.close()  # the node's own outputs (the recorder's bag) are complete before the watchdog starts
            if isinstance(node, EndsItself):
                code = code or int(node.exit_code)
        with teardown_watchdog(name, TEARDOWN_LIMIT_S, code):
            if node is not None:
                for composed in _composed(node):
                    composed.destroy_node()
                node.destroy_node()
            else:
                # a node whose constructor failed (a bad parameter) is half built and unreachable, but its
                # subscriptions and timers hold its bound methods: a reference cycle, freed only by the cyclic garbage
                # collector, whenever that runs, also in the middle of the context's shutdown; collected there, its
                # entities were finalized against a context being torn down (a node that exited by a segmentation
                # fault instead of its one error line, seen once in a full test run). Collected here, while the
                # context is valid
                gc.collect()
            if rclpy.ok():
                rclpy.try_shutdown()
    end_process(code)
    return code


PARENT_PID_ENV = "COSIM_PARENT_PID"  # set by the launch file: the launch process
_HELD: list[int | None] = []  # the session's domain lock, held shared until the process ends


def stop_with_parent() -> None:
    """Ask the kernel for SIGINT when the launching process (``COSIM_PARENT_PID``) dies.

    launch stops its nodes on Ctrl-C, but a launch process killed by SIGTERM or SIGKILL leaves them
    running (launch says so itself: "using SIGTERM can result in orphaned processes"). With this, a node
    outliving its launcher stops as on Ctrl-C. ``cosim session`` sets the same signal (SIGTERM) when it
    starts a node. Linux only; elsewhere nothing happens.
    """
    parent = os.environ.get(PARENT_PID_ENV, "")
    if not parent.isdigit():
        return
    signal_on_parent_death(signal.SIGINT)
    if os.getppid() != int(parent):  # it died before the request: stop now
        os.kill(os.getpid(), signal.SIGINT)


def end_process(code: int) -> None:
    """End the node's process at once with ``code``, once its outputs are closed and its ROS entities gone.

    What is left would only slow the stop the launcher is waiting for: Python joins the executor's worker
    threads at exit (a callback still waiting, e.g. the controller's case, which waits up to
    ``stale_timeout_s`` for a robot, kept the process 3 s past Ctrl-C under launch, then SIGTERM), and the
    interpreter's finalization (library destructors, the middleware's static objects) took 1.0-1.5 s for
    the monitor alone, more on a loaded machine. Only from a node process's main thread.

    Args:
        code: The exit status.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


@contextlib.contextmanager
def teardown_watchdog(name: str, limit_s: float, code: int) -> Iterator[None]:
    """Exit with ``code`` if the ROS teardown inside the block takes longer than ``limit_s``.

    By then the node's work is done and its files are closed; what remains is the middleware tearing down
    entities and the participant, which normally takes well under a second (0.4-1.2 s measured for the
    markers node on a loaded 2-core machine). In one CI run of the session test a node was still alive 4 s
    after SIGINT and SIGTERM and was killed (exit -9), leaving no trace of where it was. The watchdog says
    why it exits, writes every thread's stack to the node's log, and ends the process with the code the node
    earned. A C call that holds the GIL keeps that timer from running: the markers and the monitor node were
    each seen once in rclpy's ``destroy_node`` so (in about a dozen sessions on an idle machine, with and without
    rclpy's signal handlers; not reproduced on its own). faulthandler's own thread, which needs no GIL, then
    writes the stacks and ends the process with status 1 half a second later, still inside the launcher's grace
    period, where it used to be killed by the launcher.

    Args:
        name: The node's name, for the message.
        limit_s: How long the teardown may take [s, wall]; faulthandler ends the process ``TEARDOWN_FALLBACK_S`` later
            if the timer cannot run.
        code: The exit status to end with.
    """

    def expire() -> None:
        print(f"{name}: ROS teardown still running after {limit_s:g} s; exiting without it", file=sys.stderr)
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        sys.stderr.flush()
        os._exit(code)

    timer = threading.Timer(limit_s, expire)
    timer.daemon = True
    faulthandler.dump_traceback_later(limit_s + TEARDOWN_FALLBACK_S, exit=True, file=sys.stderr)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        faulthandler.cancel_dump_traceback_later()
