"""The OpenAPI 3.1 description of ``kibitz serve``, served at ``GET /openapi.json``.

Written out by hand from the checks in :mod:`kibitz.agents.serving.serve` and
:mod:`kibitz.agents.serving.table` (the limits are the same constants), so that a
frontend can generate a client or a fuzzer (e.g. schemathesis) can test the
server against it; docs/serving.md says the same in prose.
"""

from __future__ import annotations

from kibitz.agents.serving.serve import MAX_DEPTH, MAX_GAME_STRING, MAX_HISTORY


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_ERRORS = {str(code): _json(_ref("Error"), text) for code, text in (
    (400, "a malformed body, a bad game string, an illegal history, nobody to act, a Host that is not "
          "loopback (when serving on loopback)"),
    (403, "another seat's view of a table where a person plays, or a move for another seat"),
    (404, "unknown agent, path or table"),
    (408, "the request's headers or body did not arrive in time"),
    (409, "wrong seat, or not this seat's turn"),
    (413, "the body is too large"),
    (415, "a table body that is not application/json"),
    (500, "an agent or game failed (the server goes on serving)"),
    (501, "the game cannot resample a state from an information state"),
    (503, "too many requests at once"))}

_SEAT_VIEW = {
    "type": "object",
    "description": "One seat's view of a table's game: only what that seat may know.",
    "properties": {
        "table": {"type": "string"}, "mode": {"enum": ["play", "watch", "replay"]},
        "game": {"type": "string"}, "short_name": {"type": "string"}, "version": {"type": "integer"},
        "seat": {"type": "integer"}, "players": {"type": "integer"},
        "human": {"type": ["integer", "null"]},
        "seats": {"type": "array", "items": {"type": "object", "properties": {
            "seat": {"type": "integer"}, "agent": {"type": "string"}}}},
        "to_move": {"type": ["integer", "null"]}, "chance_to_move": {"type": "boolean"},
        "over": {"type": "boolean"}, "returns": {"type": ["array", "null"], "items": {"type": "number"}},
        "legal": {"type": "array", "items": {"type": "object", "properties": {
            "action": {"type": "integer"}, "move": {"type": "string"}}}},
        "board": {"type": "object", "description": "the cards and counters of the game, as this seat sees them"},
        "log": {"type": "array", "items": {"type": "object", "properties": {
            "seat": {"type": "integer"}, "move": {"type": "string"}, "text": {"type": "string"}}}},
        "information_state": {"type": "string"}, "observation": {"type": "string"},
        "error": {"type": ["string", "null"], "description": "why a bot could not move (the table stops)"},
        "bot_delay": {"type": "number"}, "seed": {"type": "integer"}, "games_played": {"type": "integer"},
    },
}


def document(version: str) -> dict:
    """The OpenAPI document for a server of kibitz ``version``."""
    return {
        "openapi": "3.1.0",
        "info": {"title": "kibitz serve", "version": version,
                 "description": "kibitz agents over HTTP and JSON, and the web table. Every error is "
                                f"{{\"error\": message, \"status\": code}}. Bodies: at most 1 MiB, nested at "
                                f"most {MAX_DEPTH} deep."},
        "paths": _paths(),
        "components": {"schemas": _schemas()},
    }


def _paths() -> dict:
    """The document's paths: the agent service's and the web tables'."""
    table_id = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
    return {
        "/health": {"get": {"summary": "liveness and version",
                            "responses": {"200": _json(_ref("Health"), "the server is up")}}},
        "/agents": {"get": {"summary": "the agent specs served, with their kind and options",
                            "responses": {"200": _json(_ref("Agents"), "the served agents")}}},
        "/act": {"post": {
            "summary": "the move a served agent makes from the acting seat's information state",
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("ActRequest")}}},
            "responses": {"200": _json(_ref("ActResponse"), "the agent's move"), **_ERRORS}}},
        "/tables": {"post": {
            "summary": "a new table: a game and a spec per seat ('human' for the person's), or a replay",
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("NewTable")}}},
            "responses": {"200": _json(_ref("SeatView"), "the new table, from the person's seat"),
                          **_ERRORS}}},
        "/tables/options": {"get": {"summary": "the games, agent kinds and suggested specs of the page",
                                    "responses": {"200": _json({"type": "object"}, "the options")}}},
        "/tables/{id}": {
            "get": {"summary": "the table from one seat (moves the bots that are due first)",
                    "parameters": table_id + [{"name": "seat", "in": "query", "required": False,
                                               "schema": {"type": "integer"},
                                               "description": "watch and replay tables only"}],
                    "responses": {"200": _json(_ref("SeatView"), "the seat's view"), **_ERRORS}},
            "delete": {"summary": "closes the table", "parameters": table_id,
                       "responses": {"200": _json({"type": "object"}, "closed"), **_ERRORS}}},
        "/tables/{id}/move": {"post": {
            "summary": "the person's move, by action id", "parameters": table_id,
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "additionalProperties": False, "required": ["action"],
                "properties": {"action": {"type": "integer"}, "seat": {"type": "integer"},
                               "version": {"type": "integer",
                                           "description": "the view's version the move answers"}}}}}},
            "responses": {"200": _json(_ref("SeatView"), "the table after the move"), **_ERRORS}}},
        "/tables/{id}/new": {"post": {
            "summary": "a new game at the table (same seats; seed + 1 unless given)", "parameters": table_id,
            "requestBody": {"content": {"application/json": {"schema": {
                "type": "object", "additionalProperties": False,
                "properties": {"seed": {"type": "integer", "minimum": 0}}}}}},
            "responses": {"200": _json(_ref("SeatView"), "the new game"), **_ERRORS}}},
        "/tables/{id}/skip": {"post": {
            "summary": "the bots play on without their delay (a watch or replay table, or a person who is "
                       "out; otherwise 409)", "parameters": table_id,
            "requestBody": {"content": {"application/json": {"schema": {
                "type": "object", "additionalProperties": False, "properties": {}}}}},
            "responses": {"200": _json(_ref("SeatView"), "the table, skipping"), **_ERRORS}}},
        "/records": {"get": {
            "summary": "each bot's record against people at this server's tables, per game string",
            "responses": {"200": _json({"type": "object", "properties": {
                "games_stored": {"type": "integer"},
                "games": {"type": "array", "items": {"type": "object", "properties": {
                    "game": {"type": "string"}, "games": {"type": "integer"},
                    "agents": {"type": "array", "items": {"type": "object", "properties": {
                        "name": {"type": "string"}, "games": {"type": "integer"},
                        "mean_payoff": {"type": ["number", "null"]}, "ci95_low": {"type": ["number", "null"]},
                        "ci95_high": {"type": ["number", "null"]}, "rating": {"type": "number"},
                        "rating_sigma": {"type": "number"}}}}}}}}}, "the records"), **_ERRORS}}},
        "/records/games.jsonl": {"get": {
            "summary": "every game finished at this server's tables, one games.jsonl record a line",
            "responses": {"200": {"description": "a games.jsonl file",
                                  "content": {"application/x-ndjson": {"schema": {"type": "string"}}}},
                          **_ERRORS}}},
    }


def _schemas() -> dict:
    """The document's schemas, by name."""
    return {
        "Error": {"type": "object", "required": ["error", "status"],
                  "properties": {"error": {"type": "string"}, "status": {"type": "integer"}}},
        "Health": {"type": "object", "properties": {"status": {"const": "ok"},
                                                    "kibitz_version": {"type": "string"},
                                                    "agents": {"type": "integer"}}},
        "Agents": {"type": "object", "properties": {"agents": {"type": "array", "items": {
            "type": "object", "properties": {"name": {"type": "string"}, "kind": {"type": "string"},
                                             "help": {"type": "string"}, "options": {"type": "object"}}}}}},
        "ActRequest": {
            "type": "object", "additionalProperties": False, "required": ["game"],
            "properties": {
                "game": {"type": "string", "maxLength": MAX_GAME_STRING,
                         "description": "an OpenSpiel game string, e.g. underdog(players=3)"},
                "agent": {"type": "string", "description": "a served spec; required when several are served"},
                "history": {"type": "array", "maxItems": MAX_HISTORY,
                            "items": {"type": "integer"},
                            "description": "every action id so far, chance outcomes included"},
                "state": {"type": "string", "description": "State.serialize(), instead of history"},
                "seed": {"type": "integer", "minimum": 0, "default": 0},
                "player": {"type": "integer", "description": "the seat the caller expects to act"}}},
        "ActResponse": {
            "type": "object",
            "properties": {
                "game": {"type": "string"}, "agent": {"type": "string"}, "player": {"type": "integer"},
                "action": {"type": "integer"}, "move": {"type": "string"},
                "probabilities": {"type": "array", "items": {"type": "object", "properties": {
                    "action": {"type": "integer"}, "move": {"type": "string"},
                    "probability": {"type": "number"}}}}}},
        "NewTable": {
            "type": "object", "additionalProperties": False,
            "properties": {
                "game": {"type": "string", "description": "a kibitz game string"},
                "seats": {"type": "array", "items": {"type": "string"},
                          "description": "one agent spec per seat; 'human' for the person's seat (none: watch)"},
                "seed": {"type": "integer", "minimum": 0, "default": 0},
                "replay": {"type": "object", "description": "one record (line) of a tournament's games.jsonl"}}},
        "SeatView": _SEAT_VIEW,
    }
