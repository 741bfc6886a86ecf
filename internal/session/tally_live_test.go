package session

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reinsdev/reins/internal/jsonw/jsonwtest"
)

// TestTallyLiveMatchesLog: a turn's live events (the payload Append hands
// its observer, the writer's value where it says what the data says) tally
// as the same events read back from the log do.
func TestTallyLiveMatchesLog(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	for i := range 1000 {
		var ts TurnStart
		var am AssistantMessage
		var te TurnEnd
		for _, v := range []any{&ts, &am, &te} {
			jsonwtest.Fill(reflect.ValueOf(v).Elem(), r)
		}
		var live, log Tally
		ok := true
		for j, v := range []struct {
			typ string
			v   any
		}{{TypeTurnStart, ts}, {TypeAssistantMessage, am}, {TypeTurnEnd, te}} {
			data, err := json.Marshal(v.v)
			if err != nil {
				ok = false
				break
			}
			e, err := NewEvent(v.typ, int64(j), at.Add(time.Duration(j)*time.Second), data)
			if err != nil {
				t.Fatal(err)
			}
			log.Push(e)
			if e.Payload, err = livePayload(v.typ, e.Seq, v.v, data); err != nil {
				t.Fatal(err)
			}
			live.Push(e)
		}
		if !ok {
			continue
		}
		if diff := cmp.Diff(log, live, cmp.AllowUnexported(Tally{})); diff != "" {
			t.Fatalf("#%d: live tally differs from the log's (-log +live):\n%s", i, diff)
		}
	}
}
