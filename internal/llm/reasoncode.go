package llm

// maxReasonCode bounds a failure code made from a provider's stop reason.
const maxReasonCode = 64

// ReasonCode is the one normaliser of a provider's unrecognised stop or
// finish reason into a failure code, shared by both wire adapters so the
// same odd reason gives the same code on either wire: ASCII letters
// upper-cased, digits and '_' kept, every other character (a space, '-',
// '.', punctuation, any non-ASCII rune) one '_', at most 64 bytes, and
// UNKNOWN_STOP_REASON for an empty reason. A hostile server cannot shape
// the code beyond [A-Z0-9_].
func ReasonCode(reason string) Code {
	b := make([]byte, 0, min(len(reason), maxReasonCode))
	for _, r := range reason {
		if len(b) >= maxReasonCode {
			break
		}
		switch {
		case r >= 'a' && r <= 'z':
			b = append(b, byte(r-'a'+'A'))
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b = append(b, byte(r))
		default:
			b = append(b, '_')
		}
	}
	if len(b) == 0 {
		return "UNKNOWN_STOP_REASON"
	}
	return Code(b)
}
