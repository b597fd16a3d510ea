"""The stored (content block) conversation in chat completions terms, and the price arithmetic."""

from __future__ import annotations

import json
from decimal import Decimal
from types import SimpleNamespace

import pytest

from specd.agents.anthropic.schemas import tools_for
from specd.agents.openai import prices, wire


def test_tool_results_come_right_after_their_call_and_text_after_them() -> None:
    stored = [
        {"role": "user", "content": [{"type": "text", "text": "files"}, {"type": "text", "text": "workflow"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Looking."},
                                          {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a"}},
                                          {"type": "tool_use", "id": "c2", "name": "run_command",
                                           "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "body"},
                                     {"type": "tool_result", "tool_use_id": "c2", "content": "refused: no",
                                      "is_error": True},
                                     {"type": "text", "text": "(specd) reminder"}]},
    ]
    sent = wire.messages("SYSTEM", stored)
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert sent[1]["content"] == "files\n\nworkflow"
    assert sent[2]["content"] == "Looking."
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in sent[2]["tool_calls"]] == [("c1", "read_file", {"path": "a"}), ("c2", "run_command",
                                                                                      {"command": "ls"})]
    assert sent[3] == {"role": "tool", "tool_call_id": "c1", "content": "body"}
    assert sent[4]["content"] == "[error] refused: no"  # chat completions has no is_error: it is said in words
    assert sent[5] == {"role": "user", "content": "(specd) reminder"}


def test_a_reply_becomes_stored_blocks_and_bad_arguments_are_kept_for_the_error() -> None:
    calls = [SimpleNamespace(id="x1", function=SimpleNamespace(name="read_file", arguments='{"path": "a.py"}')),
             SimpleNamespace(id="", function=SimpleNamespace(name="write_file", arguments="{not json"))]
    found = wire.blocks(SimpleNamespace(content="Hi.", tool_calls=calls))
    assert found[0] == {"type": "text", "text": "Hi."}
    assert found[1] == {"type": "tool_use", "id": "x1", "name": "read_file", "input": {"path": "a.py"}}
    assert found[2]["input"] == {"unparsed_arguments": "{not json"}
    assert found[2]["id"]  # a server that sends no id still gets its result matched to the call


def test_complete_step_takes_the_step_outcomes_and_its_typed_output() -> None:
    output = {"type": "object", "properties": {"files": {"type": "array"}}, "required": ["files"]}
    sent = {t["function"]["name"]: t["function"]["parameters"] for t in wire.tools(tools_for(output), ("a", "b"))}
    assert sent["complete_step"]["properties"]["outcome"]["enum"] == ["a", "b"]
    assert sent["complete_step"]["properties"]["output"]["properties"] == output["properties"]
    assert "output" in sent["complete_step"]["required"]
    assert "enum" not in sent["read_file"]["properties"]["path"]
    assert "output" not in tools_for(None)[-1]["input_schema"]["properties"]  # the shared list is not changed


def test_cached_prompt_tokens_are_counted_apart_and_priced_as_cached() -> None:
    price, known = prices.price_for("local", {"model": "local",
                                               "price_per_mtok": {"input": 1.0, "output": 4.0, "cache_read": 0.1}})
    assert known
    used = prices.usage_from({"prompt_tokens": 1000, "completion_tokens": 10,
                              "prompt_tokens_details": {"cached_tokens": 600}}, price)
    assert (used.input_tokens, used.cache_read_input_tokens, used.output_tokens) == (400, 600, 10)
    assert used.cost_usd == pytest.approx((400 * 1.0 + 600 * 0.1 + 10 * 4.0) / 1e6)


def test_without_a_cache_price_a_cached_token_costs_as_input_and_an_unknown_model_is_free_and_unknown() -> None:
    price, _ = prices.price_for("local", {"model": "local", "price_per_mtok": {"input": 2.0, "output": 3.0}})
    used = prices.usage_from({"prompt_tokens": 100, "completion_tokens": 0,
                              "prompt_tokens_details": {"cached_tokens": 100}}, price)
    assert used.cost_usd == pytest.approx(100 * 2.0 / 1e6)
    assert prices.price_for("my-local-model", {}) == (prices.FREE, False)
    other = {"model": "local", "price_per_mtok": {"input": 2.0, "output": 3.0}}
    assert prices.price_for("a-step-model", other)[1] is False  # the block's price is its own model's only
    assert prices.price_for("gpt-4o-2024-05-13", {})[1] is False  # a dated snapshot is not its alias's price


genai_prices = pytest.importorskip("genai_prices")


@pytest.mark.parametrize("model", sorted(prices.BUILTIN))
def test_the_builtin_prices_match_the_maintained_source(model: str) -> None:
    fresh, cached, out = 300_000, 100_000, 50_000
    usage = genai_prices.Usage(input_tokens=fresh + cached, cache_read_tokens=cached, output_tokens=out)
    expected = genai_prices.calc_price(usage, model, provider_id="openai").total_price
    mine = prices.usage_from({"prompt_tokens": fresh + cached, "completion_tokens": out,
                              "prompt_tokens_details": {"cached_tokens": cached}}, prices.BUILTIN[model])
    assert Decimal(str(mine.cost_usd)) == pytest.approx(expected, abs=Decimal("0.000001"))


def test_arguments_nested_past_jsons_depth_are_kept_unparsed_for_the_error() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert wire.arguments(deep) == {"unparsed_arguments": deep}
