"""Settings: defaults, then ``lhbench.toml`` in the working directory, then ``LHBENCH_*``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from lhbench.errors import ConfigError

__all__ = ["CONFIG_FILE", "Settings", "load_settings"]

CONFIG_FILE = "lhbench.toml"


class Settings(BaseSettings):
    """Everything that can be configured; each field is also ``LHBENCH_<NAME>``."""

    model_config = SettingsConfigDict(
        env_prefix="LHBENCH_", toml_file=CONFIG_FILE, extra="forbid", env_ignore_empty=True
    )

    home: Path = Field(default=Path(".lhbench"), description="Where the store and outputs go.")
    db_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default: a SQLite file under `home`."
    )
    pack_paths: list[Path] = Field(
        default_factory=list, description="Extra directories searched for packs."
    )
    models: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Model aliases: [models.NAME] with model, base_url, family, prices, limits.",
    )
    judge_panel: list[str] = Field(
        default_factory=list, description="Default rubric-judge panel (aliases or model strings)."
    )
    aj_model: str | None = Field(
        default=None, description="Model for the agent and LLM verdict judges (lhbench aj, demo)."
    )
    aj_postgres_url: str | None = Field(
        default=None, description="Replay SQL tasks on this PostgreSQL server instead of SQLite."
    )
    sandbox: str = Field(
        default="auto",
        description="Where untrusted code runs: auto (bubblewrap, else a container runtime), "
        "bubblewrap, container, or none (needs unsafe_no_sandbox).",
    )
    unsafe_no_sandbox: bool = Field(
        default=False,
        description="Allow running agents, checks and replays unconfined when no sandbox works "
        "(runs are recorded as unsandboxed).",
    )
    sandbox_image: str = Field(
        default="python:3.11-slim", description="Image of the container sandbox backend."
    )
    ray_address: str | None = Field(
        default=None,
        description="Ray cluster for `--executor ray` (e.g. ray://head:10001 or head:6379); "
        "default: a Ray instance started on this machine.",
    )
    web_public_leaderboard: bool = Field(
        default=False,
        description="Show the web app's overview (the leaderboard) without signing in; "
        "every other page always needs an account.",
    )
    web_secure_cookies: bool = Field(
        default=False,
        description="Mark the web app's cookies Secure and send HSTS (set when it is served "
        "over HTTPS, e.g. behind a TLS proxy).",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Flags beat the environment, which beats lhbench.toml."""
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls))

    @property
    def database_url(self) -> str:
        """The store URL, defaulting to ``sqlite:///<home>/lhbench.db``."""
        if self.db_url:
            return self.db_url
        return f"sqlite:///{(self.home / 'lhbench.db').as_posix()}"


def load_settings(**overrides: object) -> Settings:
    """Read the settings, turning a bad value into a ConfigError that names its source."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ConfigError(
            f"{CONFIG_FILE} / LHBENCH_{where.upper()}: {err['msg']} (setting '{where}')"
        ) from None
    except Exception as exc:  # tomllib.TOMLDecodeError and friends
        raise ConfigError(f"{CONFIG_FILE}: cannot read settings: {exc}") from None
