"""Session-scoped pytest fixtures over the harness. conftest.py (or a test module) imports
them by name: `from harness.fixtures import kafka_broker  # noqa`."""
import pytest

from .kafka import Kafka, start_kafka


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory) -> Kafka:
    """One broker for the whole run (starting one costs seconds on 2 cores). A test that
    stops or kills it must start it again (`kafka_broker.start()`) before it ends."""
    kafka = start_kafka(tmp_path_factory.mktemp("kafka"))
    try:
        yield kafka
    finally:
        kafka.stop()
