"""serving/client.py against a local stand-in for TF Serving's REST predict endpoint."""

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import keras
import pytest
import tensorflow as tf

from compgen_tf.models.export import export_model
from compgen_tf.models import AttentionSeq2Seq

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serving"))
import client  # noqa: E402

PATH = re.compile(r"^/v1/models/(?P<name>[\w-]+)(/versions/(?P<version>\d+))?:predict$")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    keras.utils.set_random_seed(0)
    model = AttentionSeq2Seq.from_words(["jump", "twice", "walk"], ["I_JUMP", "I_WALK"],
                                        embedding_dim=4, hidden_units=4, max_output_length=6)
    export_dir = export_model(model, tmp_path_factory.mktemp("models") / "scan" / "1")
    signature = tf.saved_model.load(str(export_dir)).signatures["serving_default"]

    class Predict(BaseHTTPRequestHandler):
        def do_POST(self):
            match = PATH.match(self.path)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if not match or match["name"] != "scan":
                return self._reply(404, {"error": f"Servable not found for request: {self.path}"})
            outputs = signature(commands=tf.constant(body["inputs"]["commands"], tf.string))
            self._reply(200, {"outputs": {k: [x.decode() for x in v.numpy()]
                                          for k, v in outputs.items()}})

        def _reply(self, status, payload):
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Predict)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield model, httpd.server_address[1]
    httpd.shutdown()
    thread.join(timeout=5)


def test_client_round_trip_matches_model(server):
    model, port = server
    results = client.translate(["jump twice", "walk", "jump dax", ""],
                               client.predict_url("127.0.0.1", port, "scan", version=1))
    expected = model.serve(tf.constant(["jump twice", "walk"]))
    assert [r["actions"] for r in results[:2]] == [a.decode() for a in expected["actions"].numpy()]
    assert [r["error"] for r in results[2:]] == ["unknown word(s): dax", "empty command"]
    assert results[2]["command"] == "jump dax"


def test_client_cli_exit_codes(server, capsys):
    _, port = server
    assert client.main(["--port", str(port), "--host", "127.0.0.1", "jump dax"]) == 3
    line = json.loads(capsys.readouterr().out.strip())
    assert line == {"command": "jump dax", "actions": "", "error": "unknown word(s): dax"}
    assert client.main(["--port", str(port), "--host", "127.0.0.1", "--model", "nope", "w"]) == 1
    assert "404" in capsys.readouterr().err


def test_predict_url_format():
    assert client.predict_url("h", 1, "m") == "http://h:1/v1/models/m:predict"
    assert client.predict_url("h", 1, "m", 2) == "http://h:1/v1/models/m/versions/2:predict"
