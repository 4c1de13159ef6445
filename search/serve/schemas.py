"""The request bodies of the API, as pydantic models (imported only with the ``serve`` extra).

Unknown fields are refused (E792), and no value is coerced: ``"k": "10"`` is an error, not 10.
``"k": 10.0`` is 10: JSON Schema counts a number with no fraction as an integer, and so does the API.

Example:
    >>> SearchRequest(query="rain on a roof").k
    10
    >>> SearchRequest(query="rain", k=3.0).k
    3
    >>> SearchRequest(query="rain", k="3")
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for SearchRequest
    ...
"""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

__all__ = ["SearchRequest"]


class SearchRequest(BaseModel):
    """One search: a query or a batch of queries, the hits wanted and the stages to run.

    The bounds of ``k`` and of the batch are this server's (``GET /v1/info``, ``limits``).
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    query: StrictStr | None = Field(None, description="one query (give this or `queries`)",
                                    examples=["a dog barking without people talking"])
    queries: list[StrictStr] | None = Field(None, description="a batch of queries (give this or `query`)")
    k: StrictInt = Field(10, description="hits per query, from 1 to the server's max_k")
    stage1: Literal["auto", "off", "online"] = Field(
        "auto", description="Stage 1 (query refinement): the kind's default, off, or the online beam")
    formula_scoring: Literal["auto", "on", "off"] = Field("auto", description="formula scoring")
    stage3: Literal["auto", "on", "off"] = Field("auto", description="Stage 3 (re-ranking by captions)")
    explain: StrictBool = Field(False, description="fill each hit's matched/missed/violated predicates")

    @field_validator("k", mode="before")
    @classmethod
    def _integral(cls, value: object) -> object:
        """3.0 is 3 (a JSON number with no fraction is an integer); anything else is checked as given."""
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value

    @model_validator(mode="after")
    def _one_of_query_and_queries(self) -> SearchRequest:
        if (self.query is None) == (self.queries is None):
            raise ValueError("give exactly one of `query` (a string) and `queries` (a list of strings)")
        return self
