import pytest

from lhbench.errors import ConfigError
from lhbench.models import ModelPool, infer_family, resolve_model


def test_model_strings_and_base_urls() -> None:
    s = resolve_model("openai:gpt-5.2")
    assert (s.provider, s.name, s.base_url, s.family) == ("openai", "gpt-5.2", None, "openai")
    assert resolve_model("anthropic:claude-sonnet-4-6").family == "anthropic"
    assert resolve_model("google-gla:gemini-3.1-pro").family == "google"
    local = resolve_model("openai:Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1")
    assert local.base_url == "http://127.0.0.1:8000/v1" and local.family == "qwen"
    assert local.pool_key == "http://127.0.0.1:8000/v1"
    assert infer_family("openai", "mystery", "http://x/v1") == "unknown"


def test_aliases_from_settings() -> None:
    aliases = {
        "local": {
            "model": "openai:llama-3.3-70b",
            "base_url": "http://127.0.0.1:11434/v1",
            "price_input_per_mtok": 1.0,
            "price_output_per_mtok": 3.0,
            "max_concurrency": 4,
        }
    }
    s = resolve_model("local", aliases)
    assert (s.ref, s.model_string, s.family, s.max_concurrency) == (
        "local",
        "openai:llama-3.3-70b",
        "meta",
        4,
    )
    assert s.cost(1_000_000, 100_000) == pytest.approx(1.3)
    assert s.price_source == "configured"
    with pytest.raises(ConfigError, match=r"\[models.local\]"):
        resolve_model("local", {"local": {"model": "openai:x", "max_concurrency": 0}})


@pytest.mark.parametrize("ref", ["gpt-5", "nope:model", "openai:", ""])
def test_bad_strings(ref: str) -> None:
    with pytest.raises(ConfigError):
        resolve_model(ref)


def test_hosted_model_without_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        ModelPool().get(resolve_model("openai:gpt-5.2"))
    # a local endpoint needs none
    assert ModelPool().get(resolve_model("openai:x@http://127.0.0.1:9/v1")).model_name == "openai:x"


def test_costs_without_configuration_come_from_the_price_table() -> None:
    from genai_prices import Usage, calc_price

    gpt = resolve_model("openai:gpt-5")
    table = calc_price(Usage(input_tokens=2_000, output_tokens=500), "gpt-5", provider_id="openai")
    assert gpt.cost(2_000, 500) == pytest.approx(float(table.total_price))
    assert gpt.cost(2_000, 500) > 0
    assert gpt.price_source is not None and gpt.price_source.startswith("genai-prices ")
    assert gpt.price_source.endswith(": openai/gpt-5")
    # configured prices win over the table, for the same model
    mine = resolve_model(
        "cheap",
        {"cheap": {"model": "openai:gpt-5", "price_input_per_mtok": 1.0,
                   "price_output_per_mtok": 2.0}},
    )  # fmt: skip
    assert mine.cost(1_000_000, 1_000_000) == pytest.approx(3.0)
    assert mine.price_source == "configured"
    # a model the table does not know (a local one, the stub) has no cost, not a guess
    local = resolve_model("openai:stub-judge-1@http://127.0.0.1:9/v1")
    assert (local.cost(1_000, 1_000), local.price_source) == (None, None)
    assert resolve_model("test:anything").price_source is None
