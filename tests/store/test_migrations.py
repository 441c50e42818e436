from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from lhbench.store import Store, current_revision, head_revision, make_engine, upgrade
from lhbench.store.tables import Base


def test_migrations_build_exactly_the_orm_schema(store_url: str) -> None:
    engine = make_engine(store_url)
    assert current_revision(engine) is None
    upgrade(engine)
    upgrade(engine)  # idempotent
    assert current_revision(engine) == head_revision()
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []
    engine.dispose()


def test_store_open_migrates(store_url: str) -> None:
    with Store.open(store_url) as s:
        assert current_revision(s.engine) == head_revision()
        assert s.counts()["runs"] == 0
