package sdk

import (
	"errors"
	"strconv"
	"time"
)

// Reasons of a ProtocolError: fixed texts chosen by this package.
const (
	ReasonMalformedFrame  = "malformed frame"
	ReasonFrameTooLong    = "frame too long"
	ReasonErrorResponse   = "error response"
	ReasonUnexpectedReply = "unexpected result"
	ReasonVersion         = "unsupported protocol version"
)

// ProtocolError is a runtime that broke the protocol: a frame that is not
// JSON-RPC, an error response, a result of the wrong shape. A malformed
// frame ends the connection (nothing after it can be trusted); an error
// response fails only its request.
//
// Error() is built from fixed texts only. Message holds the runtime's own
// error text, for the caller's host log: never show it to a model.
type ProtocolError struct {
	Method string // the request it answers, when known
	Reason string // one of the Reason* constants
	Code   int    // the JSON-RPC error code of an error response
	// Message is the runtime's error message (untrusted text).
	Message string
}

func (e *ProtocolError) Error() string {
	s := "sdk: protocol error: " + e.Reason
	if e.Method != "" {
		s += " to " + e.Method
	}
	if e.Code != 0 {
		s += " (code " + strconv.Itoa(e.Code) + ")"
	}
	return s
}

// TransportClosedError is a runtime whose stdout closed, or whose process
// exited, before the answer came. Exited says whether the exit was
// observed; then ExitCode is its code, or -1 with Signal naming the signal
// that ended it.
//
// Stderr is the tail of the runtime's standard error (untrusted text, for
// the caller's host log); it is never part of Error().
type TransportClosedError struct {
	Exited   bool
	ExitCode int
	Signal   string
	Stderr   string
}

func (e *TransportClosedError) Error() string {
	s := "sdk: runtime transport closed"
	switch {
	case e.Exited && e.Signal != "":
		s += " (signal " + e.Signal + ")"
	case e.Exited:
		s += " (exit code " + strconv.Itoa(e.ExitCode) + ")"
	}
	return s
}

// RequestTimeoutError is a request the runtime did not answer within
// Options.RequestTimeout.
type RequestTimeoutError struct {
	Method  string
	Timeout time.Duration
}

func (e *RequestTimeoutError) Error() string {
	return "sdk: no response to " + e.Method + " within " + e.Timeout.String()
}

// SpawnError is a runtime process that could not be started at all (no
// such executable, a working directory that does not exist).
type SpawnError struct{ Err error }

func (e *SpawnError) Error() string { return "sdk: cannot start the runtime: " + e.Err.Error() }
func (e *SpawnError) Unwrap() error { return e.Err }

// ErrClosed is returned for work cut short by Close.
var ErrClosed = errors.New("sdk: client closed")

// ErrNotQuiescent is returned by Close (and by a failed Start's rollback)
// when a process of the runtime's group was still alive after SIGKILL: the
// one cleanup failure that cannot be hidden.
var ErrNotQuiescent = errors.New("sdk: runtime process group still alive after SIGKILL")
