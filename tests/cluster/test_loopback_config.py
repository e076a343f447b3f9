"""The autoscaling config of the loopback test cluster is ``configs/cluster.yaml``'s node types, valid for Ray."""

from ray.autoscaler._private.util import validate_config

from tests.cluster.loopback_provider import NODE_TYPE_LABEL, cluster_yaml, loopback_config


def test_the_node_types_are_the_cluster_yamls_sized_for_one_machine():
    cluster = cluster_yaml()
    config = loopback_config(cluster, gcs_address="127.0.0.2:6379", temp_dir="/tmp/x", cpus_per_node=2)
    validate_config(config)  # Ray's own checks
    types, head = config["available_node_types"], cluster["head_node_type"]
    assert types.keys() == cluster["available_node_types"].keys() and config["head_node_type"] == head
    for name, spec in cluster["available_node_types"].items():
        wanted = spec["resources"]
        got = types[name]["resources"]
        assert got.get("GPU") == wanted.get("GPU")  # the same GPUs, logical here
        assert got["CPU"] == (wanted["CPU"] if name == head else min(wanted["CPU"], 2))
        assert types[name]["labels"] == {NODE_TYPE_LABEL: name} and types[name]["min_workers"] == 0
    assert types[head]["max_workers"] == 0 and config["provider"]["type"] == "external"
