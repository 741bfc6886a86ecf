package session

import "slices"

// AppendCopy appends events copied from another log (a fork's copy of its
// parent's conversation) and returns them as written. A context/compacted
// event among them is kept, with its replaced range moved onto the seqs
// the copied events got here, so the copy derives the same history as
// the original: the summary, not the conversation it replaced. A
// compaction none of whose replaced events were copied replaces nothing
// and is left out.
func (l *Log) AppendCopy(events []Event) ([]Event, error) {
	var from, to []int64 // original and new seq of every copied event, in order
	written := make([]Event, 0, len(events))
	for _, e := range events {
		data := any(e.Data)
		if e.Type == TypeContextCompacted {
			d, ok := e.Payload.(ContextCompacted)
			if !ok {
				return written, &PayloadError{Seq: e.Seq, Type: e.Type, Err: errNoPayload}
			}
			r, ok := moveRange(d.Replaces, from, to)
			if !ok {
				continue
			}
			d.Replaces = r
			data = d
		}
		w, err := l.Append(e.Type, data)
		if err != nil {
			return written, err
		}
		from, to = append(from, e.Seq), append(to, w.Seq)
		written = append(written, w)
	}
	return written, nil
}

// moveRange maps r, a range of original seqs, to the new seqs of the
// copied events inside it (from is ascending).
func moveRange(r SeqRange, from, to []int64) (SeqRange, bool) {
	i, _ := slices.BinarySearch(from, r.FromSeq)
	j, found := slices.BinarySearch(from, r.ToSeq)
	if found {
		j++
	}
	if i >= j {
		return SeqRange{}, false
	}
	return SeqRange{FromSeq: to[i], ToSeq: to[j-1]}, true
}
