package standin

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// message is the assistant message a turn becomes, as the API returns it,
// reporting u.
func (t turn) message(id string, toolID func() string, u Usage) map[string]any {
	var content []map[string]any
	stop := "end_turn"
	if len(t.Tools) == 0 {
		content = append(content, map[string]any{"type": "text", "text": t.Text})
	}
	for _, u := range t.Tools {
		stop = "tool_use"
		content = append(content, map[string]any{"type": "tool_use", "id": toolID(), "name": u.Name, "input": u.Input})
	}
	return map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": "stand-in",
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": u.Input, "output_tokens": u.Output,
			"cache_read_input_tokens": u.CacheRead, "cache_creation_input_tokens": u.CacheWrite},
	}
}

type sseEvent struct {
	name string
	data map[string]any
}

// events is msg as the Server-Sent Events of a streamed Messages API answer:
// message_start, one start/delta/stop triple per content block (a tool call's
// input arrives as a single input_json_delta), message_delta with the stop
// reason, message_stop.
func events(msg map[string]any) ([]sseEvent, error) {
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	// As the API streams it: the output so far at the start, the final
	// count in message_delta.
	usage := msg["usage"].(map[string]int)
	startUsage := map[string]int{}
	for k, v := range usage {
		startUsage[k] = v
	}
	startUsage["output_tokens"] = 1
	start["usage"] = startUsage
	evs := []sseEvent{{"message_start", map[string]any{"message": start}}}
	for i, b := range msg["content"].([]map[string]any) {
		var first, delta map[string]any
		if b["type"] == "text" {
			first = map[string]any{"type": "text", "text": ""}
			delta = map[string]any{"type": "text_delta", "text": b["text"]}
		} else {
			input, err := json.Marshal(b["input"])
			if err != nil {
				return nil, err
			}
			first = map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(input)}
		}
		evs = append(evs,
			sseEvent{"content_block_start", map[string]any{"index": i, "content_block": first}},
			sseEvent{"content_block_delta", map[string]any{"index": i, "delta": delta}},
			sseEvent{"content_block_stop", map[string]any{"index": i}},
		)
	}
	return append(evs,
		sseEvent{"message_delta", map[string]any{
			"delta": map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": nil},
			"usage": map[string]int{"output_tokens": usage["output_tokens"]},
		}},
		sseEvent{"message_stop", map[string]any{}},
	), nil
}

func stream(w http.ResponseWriter, msg map[string]any) error {
	evs, err := events(msg)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for _, e := range evs {
		e.data["type"] = e.name
		b, err := json.Marshal(e.data)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, b); err != nil {
			return err
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	return nil
}
