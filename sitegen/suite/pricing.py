"""`[cost.prices."MODEL"]` of eval/sitegen.toml: what a model's tokens cost, in US dollars per million, and the cost
of a run's tokens by them (eval/README.md, "Tokens and cost")."""

from __future__ import annotations

import difflib
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sitegen.errors import BadInput
from sitegen.plumbing.jsonread import describe_error, format_loc
from sitegen.suite.models import TokenUsage

_Price = Annotated[float, Field(ge=0, allow_inf_nan=False, strict=False)]
_PER = 1_000_000  # prices are per million tokens


class ModelPrice(BaseModel):
    """One model's prices in US dollars per million tokens: input, output, and input read from the cache (the input
    price when not given)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    input: _Price
    output: _Price
    cacheRead: _Price | None = None

    def cost(self, tokens: TokenUsage) -> float | None:
        """The dollars `tokens` cost; None when they do not record both input and output."""
        if tokens.input is None or tokens.output is None:
            return None
        cached = tokens.cacheRead or 0
        cache_price = self.input if self.cacheRead is None else self.cacheRead
        # The input count includes the cache reads (the GenAI conventions' and OpenAI's count): only the rest is
        # charged at the input price.
        dollars = (max(tokens.input - cached, 0) * self.input + cached * cache_price + tokens.output * self.output) / _PER
        return round(dollars, 9)  # nano-dollars: the same tokens give the same bytes, whatever the float noise


class CostSettings(BaseModel):
    """`[cost]` of the config file: each model's prices (`[cost.prices."MODEL"]`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    prices: dict[str, ModelPrice] = {}

    def __hash__(self) -> int:
        # The suite's settings are hashed (a cache key); a dict is not, its items are.
        return hash(tuple(sorted(self.prices.items())))

    def cost(self, tokens: TokenUsage | None) -> float | None:
        """The dollars a run's tokens cost by the price of their model; None when the trace records no tokens, no
        model, or a model without a price: not recorded, never 0."""
        if tokens is None or tokens.model is None:
            return None
        price = self.prices.get(tokens.model)
        return None if price is None else price.cost(tokens)


def cost_settings(path: Any, table: Any) -> CostSettings:
    """`[cost]` read and checked: an unknown key, or a price that is not a number ≥ 0, is bad input naming its place."""
    if not isinstance(table, dict):
        raise BadInput(path, "expected [cost] to be a table")
    try:
        return CostSettings.model_validate(table)
    except ValidationError as exc:
        first = min(exc.errors(), key=lambda error: error["type"] != "extra_forbidden")  # a typo first
        where = format_loc(("cost", *first["loc"]))
        if first["type"] == "extra_forbidden":
            known = ["prices"] if len(first["loc"]) == 1 else list(ModelPrice.model_fields)
            close = difflib.get_close_matches(str(first["loc"][-1]), known, n=1, cutoff=0.6)
            hint = f"did you mean `{close[0]}`? " if close else ""
            raise BadInput(path, f"unknown setting: {hint}expected one of: {', '.join(known)}", where=where) from None
        if first["type"] == "missing":
            raise BadInput(path, "missing (a price in US dollars per million tokens)", where=where) from None
        raise BadInput(path, f"{describe_error(first)} (a price in US dollars per million tokens, ≥ 0)", where=where) from None
