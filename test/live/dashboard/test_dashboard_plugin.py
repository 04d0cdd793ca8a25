"""The rqt plugin, loaded the way rqt loads it, with a stand-in plugin context that has rqt's interface.

rqt is not installable here (not on PyPI). What rqt does, from its public sources (rolling): RospkgPluginProvider
finds ``<rqt_gui plugin="${prefix}/plugin.xml"/>`` in each package.xml's exports (prefix = share/<package>);
RosPluginProvider parses ``<library path>`` / ``<class type base_class_type>``, keeps classes whose base is
``rqt_gui_py::Plugin``, imports ``type``'s module and calls the class with a Ros2PluginContext (a
qt_gui PluginContext: serial_number, argv, add_widget, ...; plus ``node``, spun by RclpySpinner in a thread).
Settings are qt_gui Settings (set_value / value). This test does those steps itself.
"""

from __future__ import annotations

import threading
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest
from pytestqt.exceptions import TimeoutError as QtTimeoutError

from cosim_validation.live.ros.bag import read_messages, topics_of
from cosim_validation.live.ros.dashboard_live import message_class
from test.live.dashboard.bag_truth import read_truth
from test.live.dashboard.test_dashboard_widget import LABELS, table_rows

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def discover_plugin_class(repo_root: Path) -> type:
    """package.xml export -> plugin.xml -> class, as rqt_gui's providers do."""
    import importlib

    from catkin_pkg.package import parse_package

    package = parse_package(repo_root / "package.xml")
    (export,) = [e for e in package.exports if e.tagname == "rqt_gui"]
    plugin_xml = Path(export.attributes["plugin"].replace("${prefix}", str(repo_root)))
    root = ElementTree.parse(plugin_xml).getroot()
    (library,) = root.iter("library")
    (cls,) = [c for c in library.iter("class") if c.get("base_class_type") == "rqt_gui_py::Plugin"]
    assert cls.get("name") == "DigitalTwinDashboard"
    assert cls.find("qtgui/label").text == "Digital twin dashboard"
    module_name, class_name = cls.get("type").rsplit(".", 1)
    return getattr(importlib.import_module(module_name), class_name)


class StandInSettings:
    """qt_gui.settings.Settings' interface, kept in a dict."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}

    def set_value(self, key: str, value: Any) -> None:
        self.data[key] = value

    def value(self, key: str, default_value: Any = None) -> Any:
        return self.data.get(key, default_value)

    def contains(self, key: str) -> bool:
        return key in self.data

    def all_keys(self) -> list[str]:
        return sorted(self.data)


def make_context(node: Any, serial: int = 1) -> Any:
    """A Ros2PluginContext stand-in: a QObject with rqt's context methods and the node."""
    from cosim_validation.live.dashboard.qt_binding import load_qt

    qt = load_qt()

    class StandInContext(qt.QtCore.QObject):
        def __init__(self) -> None:
            super().__init__()
            self.node = node
            self.widgets: list[Any] = []

        def serial_number(self) -> int:
            return serial

        def argv(self) -> list[str]:
            return []

        def add_widget(self, widget: Any) -> None:
            self.widgets.append(widget)

        def remove_widget(self, widget: Any) -> None:
            self.widgets.remove(widget)

        def add_toolbar(self, toolbar: Any) -> None: ...

        def remove_toolbar(self, toolbar: Any) -> None: ...

        def close_plugin(self) -> None: ...

        def reload_plugin(self) -> None: ...

    return StandInContext()


@pytest.fixture
def rqt_node(ros_domain: int) -> Any:
    """An rclpy node spun in its own thread, as rqt_gui_py's RclpySpinner spins the plugin node."""
    import rclpy
    from rclpy.context import Context

    from cosim_validation.live.nodes.node_runtime import PoliteMultiThreadedExecutor

    context = Context()
    rclpy.init(context=context, domain_id=ros_domain)
    node = rclpy.create_node("rqt_gui_py_node_test", context=context)
    executor = PoliteMultiThreadedExecutor(context=context)
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    yield node
    executor.shutdown()
    node.destroy_node()
    context.try_shutdown()


@pytest.fixture
def publisher_node(rclpy_context: Any) -> Any:
    import rclpy

    node = rclpy.create_node("bag_player", context=rclpy_context)
    yield node
    node.destroy_node()


def publish_bag(node: Any, bag: Path, plugin_topics: list[str]) -> None:
    """Publish the bag's messages on the plugin's topics, once every one of them has a matched subscriber."""
    from rclpy.duration import Duration

    from cosim_validation.live.ros.bag import project_typestore
    from cosim_validation.live.ros.qos import to_rclpy
    from cosim_validation.live.ros.republisher import qos_of

    types = {t: ty for t, (ty, _) in topics_of(bag).items() if t in plugin_topics}
    publishers = {t: node.create_publisher(message_class(ty), t, to_rclpy(qos_of(t))) for t, ty in types.items()}
    deadline = time.monotonic() + 30
    while any(p.get_subscription_count() == 0 for p in publishers.values()):
        assert time.monotonic() < deadline, "the plugin's subscriptions were not matched within 30 s"
        time.sleep(0.05)
    time.sleep(1.0)  # matched in the graph; let the data paths settle
    store = project_typestore()
    for m in read_messages(bag, list(types)):
        publishers[m.topic].publish(bytes(store.serialize_cdr(m.message, m.msgtype)))
    for publisher in publishers.values():  # reliable: wait until the plugin's node acknowledged everything
        assert publisher.wait_for_all_acked(Duration(seconds=30)), publisher.topic_name


def test_plugin_loads_runs_live_and_keeps_settings(
    qtbot: Any, repo_root: Path, session_bag: Path, rqt_node: Any, publisher_node: Any
) -> None:
    plugin_class = discover_plugin_class(repo_root)
    context = make_context(rqt_node)
    plugin = plugin_class(context)
    assert context.widgets == [plugin.dashboard.widget]  # added through the context, as rqt docks it
    qtbot.addWidget(plugin.dashboard.widget)
    assert plugin.dashboard.widget.windowTitle() == "Digital twin dashboard"

    publish_bag(publisher_node, session_bag, plugin.feed.topics)
    truth = read_truth(session_bag)
    model = plugin.dashboard.model
    try:
        qtbot.waitUntil(lambda: sum(c.reported for c in model.cases.values()) == len(truth), timeout=60_000)
    except QtTimeoutError:
        got = {k: (len(c.tracks.get(0, ())), c.reported, c.outcome) for k, c in model.cases.items()}
        raise AssertionError(f"model after publishing: {got}, revision {model.revision}") from None
    for test_id, case in truth.items():
        plugin.dashboard.select_case(test_id)
        rows = table_rows(plugin.dashboard.verdict_table)
        want = {(v.property, LABELS[int(v.verdict)]) for v in case.report.verdicts if v.robot == 2}
        assert {(r[0], r[2]) for r in rows if r[1] == "physical"} == want

    settings = StandInSettings()
    plugin.extra_topics = ["/diagnostics", "/cosim/supervisor/state", "/cosim/hazards/events"]
    plugin.save_settings(StandInSettings(), settings)
    plugin.shutdown_plugin()
    assert plugin.feed.topics == []  # unsubscribed

    second = plugin_class(make_context(rqt_node, serial=2))
    qtbot.addWidget(second.dashboard.widget)
    assert second.dashboard.widget.windowTitle() == "Digital twin dashboard (2)"
    second.restore_settings(StandInSettings(), settings)
    assert second.extra_topics == ["/diagnostics", "/cosim/supervisor/state", "/cosim/hazards/events"]
    assert not second.dashboard.follow  # saved after select_case turned following off
    _extra_topics_plug_in(qtbot, second, publisher_node)
    second.shutdown_plugin()


def _extra_topics_plug_in(qtbot: Any, plugin: Any, node: Any) -> None:
    """A supervisor state (std_msgs/String) and hazard alarms (Alert) shown without any code for them."""
    from std_msgs.msg import String

    from cosim_validation_interfaces.msg import Alert

    state = node.create_publisher(String, "/cosim/supervisor/state", 10)
    hazards = node.create_publisher(Alert, "/cosim/hazards/events", 10)
    new = {"/cosim/supervisor/state", "/cosim/hazards/events"}
    qtbot.waitUntil(lambda: not new & set(plugin.feed.waiting), timeout=20_000)  # found in the graph, with their types
    assert new <= set(plugin.feed.topics)
    deadline = time.monotonic() + 20
    while state.get_subscription_count() == 0 or hazards.get_subscription_count() == 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.5)
    state.publish(String(data="INSERTING"))
    hazards.publish(
        Alert(level=Alert.WARN, source="hazard_injector", code="encoder_dropout", message="joint 3 encoder")
    )
    model = plugin.dashboard.model
    qtbot.waitUntil(
        lambda: ("/cosim/supervisor/state", "data") in model.states and model.alert_count >= 1, timeout=20_000
    )
    assert model.states[("/cosim/supervisor/state", "data")].value == "INSERTING"
    assert any(
        a.topic == "/cosim/hazards/events" and a.code == "encoder_dropout" and a.level == 1 for a in model.alerts
    )
    qtbot.waitUntil(lambda: plugin.dashboard.state_table.rowCount() >= 1, timeout=5_000)
    assert ("/cosim/supervisor/state", "data", "INSERTING") in table_rows(plugin.dashboard.state_table)
