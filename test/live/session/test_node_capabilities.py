"""A node's optional capabilities, as the node runtime finds them: nodes it hosts, outputs it closes, its own exit
status (declared protocols of ``node_runtime``), in a real node process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import rclpy
    from rclpy.node import Node
    from cosim_validation.live.nodes.node_runtime import EndsItself, HasOutputs, HostsNodes, run_node

    class Hosted(Node):
        def __init__(self):
            super().__init__("hosted")
            self.create_timer(0.05, self.tick)

        def tick(self):
            print("hosted node spun", flush=True)
            rclpy.try_shutdown()  # the host's work is done: the process ends by itself

    class Host(Node):
        def __init__(self):
            super().__init__("host")
            self.composed_nodes = [Hosted()]
            self.exit_code = 3

        def close(self):
            print("outputs closed", flush=True)

    def build():
        host = Host()
        print("declared:", [isinstance(host, p) for p in (HostsNodes, HasOutputs, EndsItself)], flush=True)
        return host

    run_node(build)
    """
)


@pytest.mark.ros
def test_hosted_nodes_spin_outputs_close_and_the_node_sets_its_exit_status(node_env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, env=node_env)
    assert done.returncode == 3, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "declared: [True, True, True]"
    assert "hosted node spun" in lines
    assert lines[-1] == "outputs closed"
