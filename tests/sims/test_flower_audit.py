"""The Flower adapter (sims.audit.flower): a 2-client, 2-round in-process Flower simulation
through AuditingStrategy; each round's report names the clients, its bits equal the library
called directly, and the wrapped FedAvg's aggregate is unchanged."""

from __future__ import annotations

import importlib
import json
import sys

import numpy as np
import pytest
import torch
from torch import nn

from pruneleak.bounds import leakage
from pruneleak.sims.core.extras import MissingExtraError
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.fl.release import release_vectors
from pruneleak.sims.pruning.mask import Mask

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("ray")]  # one Ray runtime at a time

LR = 0.5
M = 8  # candidates per client
#: each client's secret: the candidate it trains on (B = 1), by partition id
SECRETS = {0: 3, 1: 5}
#: few draws and iterations: the attacks' quality is not under test here
OPTIONS = {"samples": 256, "attack_targets": 1, "attack_iterations": 2, "device": "cpu"}


def logistic() -> nn.Module:
    """Logistic regression on 1x4x4 images, 3 classes (51 parameters)."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(16, 3))


def candidates(partition: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(100 + partition)
    return torch.rand((M, 1, 4, 4), generator=generator), torch.arange(M) % 3


def half_mask() -> Mask:
    """Keeps each weight with probability 1/2 (seeded), every bias."""
    generator = torch.Generator().manual_seed(7)
    return Mask(
        {
            "1.weight": torch.rand((3, 16), generator=generator) < 0.5,
            "1.bias": torch.ones(3, dtype=torch.bool),
        }
    )


def weights_of(arrays) -> dict[str, torch.Tensor]:
    names = [name for name, _ in logistic().named_parameters()]
    return {name: torch.as_tensor(np.array(a)) for name, a in zip(names, arrays, strict=True)}


def test_missing_flower_is_one_line_naming_the_extra(monkeypatch):
    for name in ("flwr", "flwr.common", "flwr.server", "flwr.server.strategy"):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "pruneleak.sims.audit.flower", raising=False)
    importlib.import_module("pruneleak.sims.audit")  # the rest of sims works without Flower
    with pytest.raises(MissingExtraError, match=r"pip install 'pruneleak\[flower\]'") as info:
        importlib.import_module("pruneleak.sims.audit.flower")
    assert isinstance(info.value, ValueError) and "\n" not in str(info.value)
    monkeypatch.delitem(sys.modules, "pruneleak.sims.audit.flower", raising=False)


def test_two_clients_two_rounds_through_flower_simulation(tmp_path):
    pytest.importorskip("flwr")
    from flwr.app import Context
    from flwr.client import ClientApp, NumPyClient
    from flwr.common import ndarrays_to_parameters, parameters_to_ndarrays
    from flwr.server import ServerApp, ServerAppComponents, ServerConfig
    from flwr.server.strategy import FedAvg
    from flwr.simulation import run_simulation

    from pruneleak.sims.audit.flower import SUMMARY, AuditingStrategy

    mask = half_mask()

    class Client(NumPyClient):
        def __init__(self, partition: int):
            self.partition = partition

        def fit(self, parameters, config):
            """PriPrune eq. (1), one step at LR on the secret candidate (B = 1)."""
            model = logistic()
            x, y = candidates(self.partition)
            i = SECRETS[self.partition]
            w = client_update(
                model, weights_of(parameters), mask, x[i : i + 1], y[i : i + 1], lr=LR
            )
            return [t.numpy() for t in w.values()], 1, {"client": f"c{self.partition}"}

    def client_fn(context: Context):
        return Client(int(context.node_config["partition-id"])).to_client()

    class RecordingFedAvg(FedAvg):
        """FedAvg that keeps what it broadcast and what it aggregated, per round."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.sent, self.aggregated, self.uploads = {}, {}, {}

        def configure_fit(self, server_round, parameters, client_manager):
            self.sent[server_round] = parameters_to_ndarrays(parameters)
            return super().configure_fit(server_round, parameters, client_manager)

        def aggregate_fit(self, server_round, results, failures):
            self.uploads[server_round] = [parameters_to_ndarrays(r.parameters) for _, r in results]
            out = super().aggregate_fit(server_round, results, failures)
            self.aggregated[server_round] = out
            return out

    initial = ndarrays_to_parameters([t.detach().numpy() for t in logistic().parameters()])
    inner = RecordingFedAvg(
        fraction_fit=1.0,
        fraction_evaluate=0.0,
        min_fit_clients=2,
        min_available_clients=2,
        initial_parameters=initial,
    )
    wrapper = AuditingStrategy(
        inner,
        model_factory=logistic,
        candidates={f"c{k}": candidates(k) for k in SECRETS},
        out_dir=tmp_path,
        mask=mask,
        lr=LR,
        batch_size=1,
        audit_options=OPTIONS,
    )

    def server_fn(context: Context):
        return ServerAppComponents(strategy=wrapper, config=ServerConfig(num_rounds=2))

    run_simulation(
        server_app=ServerApp(server_fn=server_fn),
        client_app=ClientApp(client_fn=client_fn),
        num_supernodes=2,
        backend_config={
            "client_resources": {"num_cpus": 1, "num_gpus": 0.0},
            "init_args": {"num_cpus": 2, "num_gpus": 0},
        },
    )

    # each round: one record per client, named, with its node id
    records = [json.loads(line) for line in (tmp_path / SUMMARY).read_text().splitlines()]
    assert records == wrapper.records
    assert sorted((r["round"], r["client"]) for r in records) == [
        (1, "c0"),
        (1, "c1"),
        (2, "c0"),
        (2, "c1"),
    ]
    for t in (1, 2):
        page = (tmp_path / f"round={t}" / "round.md").read_text()
        for r in records:
            if r["round"] == t:
                assert f"| {r['client']} | {r['node_id']} |" in page
                assert (tmp_path / f"round={t}" / f"client={r['client']}" / "audit.md").exists()

    # the bits against release_vectors + batch_leakage at the round's broadcast weights
    model = logistic()
    for r in records:
        partition = int(r["client"][1:])
        x, y = candidates(partition)
        w = weights_of(inner.sent[r["round"]])
        rows = release_vectors(model, w, mask, x, y, lr=LR).numpy()
        direct = leakage.batch_leakage(rows, 0.0, 1)
        assert r["exact_method"] == direct.method == "exact"
        # both exact at s = 0 on the same float64 releases: round-off only
        assert r["exact_bits"] == pytest.approx(direct.bits, abs=1e-9)
        assert r["bayes_success"] == pytest.approx(direct.bayes_success, abs=1e-9)
        assert r["ceiling_bits"] == pytest.approx(np.log2(M), abs=1e-12)
        # the upload is the modelled release of the client's secret (float32 client)
        assert r["nearest_candidate"] == SECRETS[partition]
        assert r["nearest_distance"] < 1e-5

    # FedAvg's aggregate is what the server used: round 2 broadcast the round-1 mean
    for t in (1, 2):
        uploads = inner.uploads[t]
        mean = [np.mean([u[k] for u in uploads], axis=0) for k in range(len(uploads[0]))]
        got = parameters_to_ndarrays(inner.aggregated[t][0])
        for a, b in zip(got, mean, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-7)  # float32 mean of 2
    for a, b in zip(inner.sent[2], parameters_to_ndarrays(inner.aggregated[1][0]), strict=True):
        np.testing.assert_array_equal(a, b)


def test_observed_mask_and_node_ids_without_a_simulation(tmp_path):
    """Driven directly (no Ray): clients without a name metric are named by node id, the
    "observed" mask is the upload's nonzero pattern, and an unknown client is refused."""
    pytest.importorskip("flwr")
    from flwr.common import Code, FitRes, Status, ndarrays_to_parameters
    from flwr.server.strategy import FedAvg

    from pruneleak.sims.audit.flower import AuditingStrategy

    class Proxy:  # what the strategy reads of a ClientProxy
        def __init__(self, cid):
            self.cid = cid

    class Manager:  # FedAvg samples its clients from this
        def num_available(self):
            return 1

        def wait_for(self, num_clients, timeout=None):
            return True

        def sample(self, num_clients, min_num_clients=None, criterion=None):
            return [Proxy("node-7")]

    mask = half_mask()
    model = logistic()
    sent = [t.detach().numpy() for t in model.parameters()]
    wrapper = AuditingStrategy(
        FedAvg(min_fit_clients=1, min_available_clients=1),
        model_factory=logistic,
        candidates={"node-7": candidates(0)},
        out_dir=tmp_path,
        mask="observed",
        lr=LR,
        audit_options=OPTIONS,
    )
    (proxy, _), *_ = wrapper.configure_fit(1, ndarrays_to_parameters(sent), Manager())
    x, y = candidates(0)
    w = client_update(model, weights_of(sent), mask, x[2:3], y[2:3], lr=LR)
    upload = [t.numpy() for t in w.values()]
    ok = Status(code=Code.OK, message="")
    fit_res = FitRes(ok, ndarrays_to_parameters(upload), 1, {})
    wrapper.aggregate_fit(1, [(proxy, fit_res)], [])
    (record,) = wrapper.records
    assert (record["client"], record["node_id"]) == ("node-7", "node-7")
    assert record["p"] == pytest.approx(mask.sparsity(), abs=1e-12)
    rows = release_vectors(model, weights_of(sent), mask, x, y, lr=LR).numpy()
    assert record["exact_bits"] == pytest.approx(leakage.batch_leakage(rows, 0.0, 1).bits)
    assert record["nearest_candidate"] == 2

    wrapper.configure_fit(2, ndarrays_to_parameters(sent), Manager())
    stranger = FitRes(ok, ndarrays_to_parameters(upload), 1, {"client": "c9"})
    with pytest.raises(ValueError, match=r"'candidates' parameter of AuditingStrategy.*'c9'"):
        wrapper.aggregate_fit(2, [(proxy, stranger)], [])
