"""The part of the SARIF 2.1.0 JSON schema that covers what skillbook emits.

Written from the OASIS SARIF 2.1.0 specification (sections 3.13 sarifLog, 3.14 run,
3.18-3.19 tool/toolComponent, 3.49 reportingDescriptor, 3.27 result, 3.28 location,
3.29 physicalLocation, 3.4 artifactLocation, 3.30 region, 3.11 message, 3.20
invocation). Objects list the properties the specification defines for them and
refuse any other (``additionalProperties: false``), so a misspelt key fails.
"""

from __future__ import annotations

from typing import Any

_MESSAGE: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "markdown": {"type": "string"},
                   "id": {"type": "string"}, "arguments": {"type": "array", "items": {"type": "string"}}},
    "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
    "additionalProperties": False,
}  # fmt: skip
_MULTIFORMAT: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "markdown": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}
_LEVEL = {"enum": ["none", "note", "warning", "error"]}
_PROPERTY_BAG: dict[str, Any] = {
    "type": "object",
    "properties": {"tags": {"type": "array", "uniqueItems": True, "items": {"type": "string"}}},
}
_ARTIFACT_LOCATION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "uri": {"type": "string", "format": "uri-reference"},
        "uriBaseId": {"type": "string"},
        "index": {"type": "integer", "minimum": -1},
        "description": _MESSAGE,
        "properties": _PROPERTY_BAG,
    },
    "additionalProperties": False,
}
_REGION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "startLine": {"type": "integer", "minimum": 1},
        "startColumn": {"type": "integer", "minimum": 1},
        "endLine": {"type": "integer", "minimum": 1},
        "endColumn": {"type": "integer", "minimum": 1},
        "charOffset": {"type": "integer", "minimum": -1},
        "charLength": {"type": "integer", "minimum": 0},
        "snippet": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "binary": {"type": "string"}},
            "additionalProperties": False,
        },
        "message": _MESSAGE,
        "properties": _PROPERTY_BAG,
    },
    "additionalProperties": False,
}
_LOCATION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "minimum": -1},
        "physicalLocation": {
            "type": "object",
            "properties": {"artifactLocation": _ARTIFACT_LOCATION, "region": _REGION,
                           "contextRegion": _REGION, "properties": _PROPERTY_BAG},
            "anyOf": [{"required": ["artifactLocation"]}, {"required": ["address"]}],
            "additionalProperties": False,
        },
        "message": _MESSAGE,
        "properties": _PROPERTY_BAG,
    },
    "additionalProperties": False,
}  # fmt: skip
_REPORTING_DESCRIPTOR: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "shortDescription": _MULTIFORMAT,
        "fullDescription": _MULTIFORMAT,
        "help": _MULTIFORMAT,
        "helpUri": {"type": "string", "format": "uri"},
        "defaultConfiguration": {
            "type": "object",
            "properties": {"enabled": {"type": "boolean"}, "level": _LEVEL,
                           "rank": {"type": "number", "minimum": -1, "maximum": 100},
                           "parameters": _PROPERTY_BAG},
            "additionalProperties": False,
        },
        "properties": _PROPERTY_BAG,
    },
    "required": ["id"],
    "additionalProperties": False,
}  # fmt: skip
_RESULT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ruleId": {"type": "string"},
        "ruleIndex": {"type": "integer", "minimum": -1},
        "kind": {"enum": ["notApplicable", "pass", "fail", "review", "open", "informational"]},
        "level": _LEVEL,
        "message": _MESSAGE,
        "locations": {"type": "array", "items": _LOCATION},
        "partialFingerprints": {"type": "object", "additionalProperties": {"type": "string"}},
        "fingerprints": {"type": "object", "additionalProperties": {"type": "string"}},
        "rank": {"type": "number", "minimum": -1, "maximum": 100},
        "properties": _PROPERTY_BAG,
    },
    "required": ["message"],
    "additionalProperties": False,
}
SARIF_2_1_0_SUBSET: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"enum": ["2.1.0"]},
        "runs": {
            "type": ["array", "null"],
            "items": {
                "type": "object",
                "properties": {
                    "tool": {
                        "type": "object",
                        "properties": {
                            "driver": {
                                "type": "object",
                                "properties": {
                                    "name": {"type": "string"},
                                    "fullName": {"type": "string"},
                                    "version": {"type": "string"},
                                    "semanticVersion": {"type": "string"},
                                    "informationUri": {"type": "string", "format": "uri"},
                                    "rules": {"type": "array", "uniqueItems": True,
                                              "items": _REPORTING_DESCRIPTOR},
                                    "properties": _PROPERTY_BAG,
                                },
                                "required": ["name"],
                                "additionalProperties": False,
                            },
                            "properties": _PROPERTY_BAG,
                        },
                        "required": ["driver"],
                        "additionalProperties": False,
                    },
                    "invocations": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"executionSuccessful": {"type": "boolean"},
                                           "exitCode": {"type": "integer"},
                                           "properties": _PROPERTY_BAG},
                            "required": ["executionSuccessful"],
                            "additionalProperties": False,
                        },
                    },
                    "originalUriBaseIds": {"type": "object", "additionalProperties": _ARTIFACT_LOCATION},
                    "results": {"type": ["array", "null"], "items": _RESULT},
                    "properties": _PROPERTY_BAG,
                },
                "required": ["tool"],
                "additionalProperties": False,
            },
        },
        "properties": _PROPERTY_BAG,
    },
    "required": ["version", "runs"],
    "additionalProperties": False,
}  # fmt: skip
