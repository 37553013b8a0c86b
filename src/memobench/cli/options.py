"""Command-line flags generated from the run configuration's pydantic models.

Each flag of a run setting is defined once, as a field of
:class:`~memobench.evaluation.protocol.Protocol` or
:class:`~memobench.evaluation.execution.Execution`: its name (``--field-name``,
or the names listed under ``cli`` in the field's ``json_schema_extra``), type,
default, bounds (``ge``/``le``) and help (the field's ``description``).
:func:`config_options` puts those flags in a command's signature where the
command has a parameter annotated with the model, and hands the command the
model built from them; a value the model refuses (settings that do not go
together) ends the command with one line (:func:`memobench.cli.common.fail`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

import typer
from pydantic import BaseModel, ValidationError
from rich.markup import escape

from memobench.cli.common import fail


@dataclass(frozen=True)
class Flags:
    """Which fields of ``model`` a command offers as flags, and its per-command defaults or help."""

    model: type[BaseModel]
    exclude: tuple[str, ...] = ()  # fields the command sets itself (they keep the model's default)
    only: tuple[str, ...] | None = None  # when given: just these fields
    # field -> {"default": ..., "help": ..., "min": ...}: a command's own default, help or bound
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def fields(self) -> list[str]:
        names = [n for n, f in self.model.model_fields.items() if _cli(f) is not False and n not in self.exclude]
        return names if self.only is None else [n for n in names if n in self.only]

    def parameters(self) -> list[inspect.Parameter]:
        return [_parameter(name, self.model.model_fields[name], self.overrides.get(name, {})) for name in self.fields()]

    def build(self, values: dict[str, Any]) -> BaseModel:
        try:
            return self.model(**values)
        except ValidationError as e:  # a cross-field rule: bounds were checked by the flags
            raise fail(str(e.errors()[0]["msg"]).removeprefix("Value error, ")) from None


def _cli(info) -> Any:
    return (info.json_schema_extra or {}).get("cli") if isinstance(info.json_schema_extra, dict) else None


def _parameter(name: str, info, override: Mapping[str, Any]) -> inspect.Parameter:
    bounds = {}
    for constraint in info.metadata:
        for attr, option in (("ge", "min"), ("le", "max")):
            if getattr(constraint, attr, None) is not None:
                bounds[option] = getattr(constraint, attr)
    bounds.update({k: v for k, v in override.items() if k in ("min", "max")})
    names = _cli(info) if isinstance(_cli(info), list) else []
    help_text = escape(override.get("help", info.description or ""))  # e.g. 'memobench[ray]' is not markup
    option = typer.Option(*names, help=help_text, **bounds)
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=override.get("default", info.default),
        annotation=Annotated[info.annotation, option],
    )


_CONTEXT = "cli_context"


def _left_to_model(ctx: typer.Context | None, group: Flags, name: str, value: Any) -> bool:
    """True for a flag the user did not give that holds the model's own default: the model then
    fills the field itself (a named protocol's defaults take its place, ``--protocol robomemarena``)."""
    source = ctx.get_parameter_source(name) if ctx is not None else None
    # Compared by name: Typer may bring its own copy of click's ParameterSource enum.
    if source is None or source.name != "DEFAULT":
        return False
    return value == group.model.model_fields[name].default


def config_options(**groups: Flags) -> Callable[[Callable], Callable]:
    """Replace each parameter named in ``groups`` by its model's flags; call with the built model.

    ``@config_options(protocol=Flags(Protocol))`` on ``def cmd(tasks: ..., protocol: Protocol)``
    gives ``cmd`` the flags ``--seed``, ``--replan-steps``, ... in ``protocol``'s place.
    """

    def decorate(command: Callable) -> Callable:
        own = inspect.signature(command, eval_str=True).parameters
        params: list[inspect.Parameter] = []
        for name, param in own.items():
            params += groups[name].parameters() if name in groups else [param.replace(kind=param.KEYWORD_ONLY)]
        taken = [p.name for p in params]
        if len(taken) != len(set(taken)):
            raise TypeError(f"{command.__name__}: a flag is defined twice ({sorted(taken)})")
        # Typer hands a parameter annotated typer.Context the click context: it tells given flags from defaults.
        params.append(inspect.Parameter(_CONTEXT, inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context))

        def run(**values: Any) -> Any:
            ctx = values.pop(_CONTEXT, None)
            for name, group in groups.items():
                given = {f: values.pop(f) for f in group.fields()}
                values[name] = group.build({f: v for f, v in given.items() if not _left_to_model(ctx, group, f, v)})
            return command(**values)

        run.__name__, run.__qualname__, run.__doc__ = command.__name__, command.__qualname__, command.__doc__
        run.__module__ = command.__module__
        run.__signature__ = inspect.Signature(params)
        run.__annotations__ = {p.name: p.annotation for p in params}
        return run

    return decorate
