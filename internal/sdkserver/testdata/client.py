#!/usr/bin/env python3
"""A reins SDK client in another language than Go.

Drives `reins sdk` (the command line in argv) over NDJSON JSON-RPC 2.0:
initialize, a malformed line and an unknown method (both answered with
errors, not a crash), a prompt whose run makes a tool call, the session
events up to status idle, and shutdown. Prints one JSON summary on stdout;
exits non-zero with a message on stderr when the runtime breaks the
protocol.
"""
import json
import subprocess
import sys


def fail(msg):
    print("client.py: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) < 2:
        fail("usage: client.py COMMAND [ARGS...]")
    proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    notifications = []

    def send_line(line):
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()

    def send(obj):
        send_line(json.dumps(obj, separators=(",", ":")))

    def read_frame():
        line = proc.stdout.readline()
        if not line:
            fail("runtime closed stdout")
        if not line.endswith(b"\n"):
            fail("unterminated frame")
        try:
            frame = json.loads(line)
        except ValueError:
            fail("stdout carried a line that is not JSON: %r" % line[:200])
        if frame.get("jsonrpc") != "2.0":
            fail("frame without jsonrpc 2.0: %r" % frame)
        return frame

    def response(want_id):
        # Notifications may come before the response; keep them.
        while True:
            frame = read_frame()
            if "method" in frame:
                notifications.append(frame)
                continue
            if frame.get("id") != want_id:
                fail("response to %r, want %r" % (frame.get("id"), want_id))
            return frame

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": 1, "cwd": "."}})
    init = response(1)
    if init.get("result", {}).get("protocolVersion") != 1:
        fail("initialize: %r" % init)
    server = init["result"]["serverInfo"]

    send_line("this is not json")
    parse_error = response(None)["error"]["code"]

    send({"jsonrpc": "2.0", "id": 2, "method": "no/such/method", "params": {}})
    unknown_method = response(2)["error"]["code"]

    send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
          "params": {"content": [{"type": "text", "text": "please list the files"}]}})
    receipt = response(3)["result"]
    session_id, message_id = receipt["sessionId"], receipt["messageId"]

    events, statuses, idle = [], [], None
    for frame in notifications:
        if frame["method"] == "session/event":
            events.append(frame["params"])
    while idle is None:
        frame = read_frame()
        if "method" not in frame:
            fail("unexpected response %r" % frame)
        params = frame["params"]
        if frame["method"] == "session/event" and params["sessionId"] == session_id:
            events.append(params)
        elif frame["method"] == "session/status" and params["sessionId"] == session_id:
            statuses.append(params["status"])
            if params["status"] == "idle" and params.get("messageId") == message_id:
                idle = params

    seqs = [e["event"]["seq"] for e in events]
    if seqs != list(range(len(seqs))):
        fail("event seqs not contiguous from 0: %r" % seqs)
    types = [e["event"]["type"] for e in events]
    tool_calls = [e["event"]["data"]["name"] for e in events if e["event"]["type"] == "tool/call"]
    tool_results = [e["event"]["data"]["isError"] for e in events if e["event"]["type"] == "tool/result"]
    turn_end = [e["event"]["data"]["reason"] for e in events if e["event"]["type"] == "turn/end"]
    output = "".join(b.get("text", "") for b in idle.get("output", []) if b["type"] == "text")

    send({"jsonrpc": "2.0", "id": 4, "method": "shutdown", "params": {}})
    shutdown = response(4)
    proc.stdin.close()
    rest = proc.stdout.read()
    code = proc.wait(timeout=30)

    print(json.dumps({
        "server": server,
        "parseError": parse_error,
        "unknownMethod": unknown_method,
        "sessionId": session_id,
        "statuses": statuses,
        "firstEvent": types[0] if types else None,
        "toolCalls": tool_calls,
        "toolResultErrors": tool_results,
        "turnEnd": turn_end,
        "stopReason": idle.get("stopReason"),
        "output": output,
        "shutdown": shutdown.get("result"),
        "trailingBytes": len(rest),
        "exitCode": code,
    }))


if __name__ == "__main__":
    main()
