"""A minimal REST client for a compgen_tf model behind TF Serving.

    python serving/client.py --model scan "jump twice after walk left" "walk"

Sends TF Serving's predict request in the columnar ("inputs") format,
`{"signature_name": "serving_default", "inputs": {"commands": [...]}}`, and reads
`{"outputs": {"actions": [...], "error": [...]}}` back. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request


def predict_url(host: str, port: int, model: str, version: int | None = None) -> str:
    """TF Serving's REST predict endpoint for `model` (latest version unless given)."""
    version_part = f"/versions/{version}" if version is not None else ""
    return f"http://{host}:{port}/v1/models/{model}{version_part}:predict"


def translate(commands: list[str], url: str, timeout: float = 30.0) -> list[dict]:
    """Sends `commands` to `url`; returns one {"command", "actions", "error"} dict each.

    Raises `RuntimeError` with the server's message when the request fails.
    """
    body = json.dumps({"signature_name": "serving_default", "inputs": {"commands": commands}})
    request = urllib.request.Request(url, data=body.encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            outputs = json.loads(response.read())["outputs"]
    except urllib.error.HTTPError as error:
        raise RuntimeError(f"{url} answered {error.code}: {error.read().decode()}") from error
    except urllib.error.URLError as error:
        raise RuntimeError(f"cannot reach {url}: {error.reason}") from error
    return [{"command": c, "actions": a, "error": e}
            for c, a, e in zip(commands, outputs["actions"], outputs["error"])]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("commands", nargs="+", help="SCAN commands to translate")
    parser.add_argument("--host", default="localhost")
    parser.add_argument("--port", type=int, default=8501, help="TF Serving's REST port")
    parser.add_argument("--model", default="scan", help="model name in TF Serving")
    parser.add_argument("--version", type=int, help="model version (default: latest)")
    args = parser.parse_args(argv)
    try:
        results = translate(args.commands, predict_url(args.host, args.port, args.model,
                                                       args.version))
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for result in results:
        print(json.dumps(result))
    return 0 if all(not r["error"] for r in results) else 3


if __name__ == "__main__":
    sys.exit(main())
