package hosted

import (
	"sort"
	"strings"
	"sync"
)

// Served records the model names a service answered with. A hosted API resolves an
// alias to a dated model ("gpt-4o-mini" is served as "gpt-4o-mini-2024-07-18") and may
// move the alias, so the requested name does not say what judged: the plugins report
// these names in their identity, as "served_model", once a reply (live or cached) has
// named one.
type Served struct {
	mu    sync.Mutex
	names map[string]bool
}

// Add records a model name from a reply; an empty one is ignored.
func (s *Served) Add(name string) {
	if s == nil || strings.TrimSpace(name) == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names == nil {
		s.names = map[string]bool{}
	}
	s.names[name] = true
}

// String is every name seen, sorted and comma-separated; "" before the first reply.
func (s *Served) String() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.names))
	for n := range s.names {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Into sets identity["served_model"] when a model was seen.
func (s *Served) Into(identity map[string]string) {
	if v := s.String(); v != "" {
		identity["served_model"] = v
	}
}
