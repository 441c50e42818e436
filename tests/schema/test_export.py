import json
from pathlib import Path

import jsonschema

from lhbench.packs import bundled_pack_dirs, load_pack
from lhbench.schema import EXPORTED_MODELS, export_json_schemas
from tests.factories import make_grade, make_run, make_trajectory


def test_export_writes_a_valid_schema_per_model(tmp_path: Path) -> None:
    written = export_json_schemas(tmp_path)
    assert {p.name for p in written} == {f"{m.__name__}.schema.json" for m in EXPORTED_MODELS}
    schemas = {p.name.split(".")[0]: json.loads(p.read_text()) for p in written}
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)
    # real instances validate against their exported schema ...
    pack = load_pack(next(d for d in bundled_pack_dirs() if d.name == "lhbench-rubrics"))
    for name, obj in (
        ("TaskPack", pack),
        ("Rubric", pack.rubrics[0]),
        ("Run", make_run()),
        ("Trajectory", make_trajectory()),
        ("Grade", make_grade()),
    ):
        jsonschema.validate(obj.model_dump(mode="json"), schemas[name])
    # ... and a broken one does not
    bad = make_run().model_dump(mode="json") | {"status": "exploded"}
    try:
        jsonschema.validate(bad, schemas["Run"])
    except jsonschema.ValidationError as exc:
        assert "exploded" in str(exc)
    else:
        raise AssertionError("schema accepted an unknown run status")
