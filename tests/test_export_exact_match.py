"""`scripts/export_exact_match.py`: scoring a SavedModel's string signature on a split."""

import importlib.util

import tensorflow as tf

spec = importlib.util.spec_from_file_location("export_exact_match",
                                              "scripts/export_exact_match.py")
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)


def test_translates_in_batches_and_keeps_each_rows_error():
    calls = []

    def signature(commands):  # a stand-in for `serving_default`: echoes, refuses "twice"
        texts = [c.decode() for c in commands.numpy()]
        calls.append(len(texts))
        return {"actions": tf.constant(["" if t == "twice" else t.upper() for t in texts]),
                "error": tf.constant(["not a SCAN command" if t == "twice" else ""
                                      for t in texts])}

    actions, errors = script.translate_through(signature, ["walk", "twice", "run", "look", "jump"],
                                               batch=2)
    assert calls == [2, 2, 1]
    assert actions == ["WALK", "", "RUN", "LOOK", "JUMP"]
    assert errors == ["", "not a SCAN command", "", "", ""]


def test_refuses_a_folder_without_a_saved_model_and_an_unknown_split(tmp_path, capsys):
    assert script.main(["--export", str(tmp_path), "--split", "length"]) == 2
    assert "has no saved_model.pb" in capsys.readouterr().err
    (tmp_path / "saved_model.pb").write_bytes(b"")
    assert script.main(["--export", str(tmp_path), "--split", "no_such_split"]) == 2
    assert "no_such_split" in capsys.readouterr().err
