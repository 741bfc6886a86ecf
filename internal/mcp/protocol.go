package mcp

import (
	"encoding/json"
	"fmt"
)

// The MCP messages reins sends and reads: only the fields it uses. reins
// speaks the protocol itself rather than link the official Go SDK, whose
// package initialisation (encoding/gob, a JSON-schema validator, OAuth)
// cost every reins process ~3 MiB and ~3 ms at start, MCP or not (issue
// 27).

// protocolVersion is the version reins asks for in initialize: the
// newest it speaks.
const protocolVersion = "2025-11-25"

// supportedVersions are the versions reins accepts in a server's
// initialize answer (the server may answer with an older one it speaks).
var supportedVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type initializeParams struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ClientInfo      implementation `json:"clientInfo"`
}

type initializeResult struct {
	ProtocolVersion string `json:"protocolVersion"`
}

type listToolsParams struct {
	Cursor string `json:"cursor,omitempty"`
}

type listToolsResult struct {
	Tools      []*toolInfo `json:"tools"`
	NextCursor string      `json:"nextCursor,omitempty"`
}

// toolInfo is one listed tool.
type toolInfo struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Annotations *struct {
		Title        string `json:"title,omitempty"`
		ReadOnlyHint bool   `json:"readOnlyHint,omitempty"`
	} `json:"annotations,omitempty"`
}

type callToolParams struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// CallResult is a tools/call result: what Render turns into the model's
// text.
type CallResult struct {
	Content []Content `json:"content"`
	// StructuredContent is the result's structured value as JSON (absent
	// or null: none).
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// ContentType is the type of a content part.
type ContentType string

const (
	ContentText         ContentType = "text"
	ContentImage        ContentType = "image"
	ContentAudio        ContentType = "audio"
	ContentResourceLink ContentType = "resource_link"
	ContentResource     ContentType = "resource"
)

// Content is one part of a result; which fields are set depends on Type.
type Content struct {
	Type ContentType `json:"type"`
	// Text of a text part.
	Text string `json:"text,omitempty"`
	// MIMEType and Data (decoded from base64) of an image or audio part.
	MIMEType string `json:"mimeType,omitempty"`
	Data     []byte `json:"data,omitempty"`
	// URI of a resource link.
	URI string `json:"uri,omitempty"`
	// Resource of an embedded resource.
	Resource *ResourceContents `json:"resource,omitempty"`
}

// ResourceContents is an embedded resource: text, or a binary Blob.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     []byte `json:"blob,omitempty"`
}

// rpcError is a JSON-RPC error answer. Its Message is the server's and
// goes to the host log only.
type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message)
}

// JSON-RPC error codes reins sends.
const codeMethodNotFound = -32601

// message is any JSON-RPC 2.0 message: a request (method and id), a
// notification (method, no id) or a response (id with result or error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}
