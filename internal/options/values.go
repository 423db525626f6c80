package options

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// setValue stores one textual value into the field the option owns. It is
// shared by the command line, job files, the environment and config files so
// that every source validates values the same way.
func (s *Spec) setValue(c *Config, raw string) error {
	switch p := s.Field(c).(type) {
	case *Tri:
		v, err := ParseTri(raw)
		if err != nil {
			return err
		}
		*p = v
	case *string:
		v := raw
		if len(s.Choices) > 0 {
			v = strings.ToLower(v)
			if !slices.Contains(s.Choices, v) {
				return fmt.Errorf("invalid choice %q (choose from %s)", raw, strings.Join(s.Choices, ", "))
			}
		}
		*p = v
	case *int:
		v, err := parseInt(raw)
		if err != nil {
			return err
		}
		*p = v
	case *uint64:
		v, err := strconv.ParseUint(strings.TrimSpace(raw), 0, 64)
		if err != nil {
			return fmt.Errorf("invalid integer %q (a whole number from 0 to %d)", raw, uint64(math.MaxUint64))
		}
		*p = v
	case *[]string:
		for _, v := range splitList(s, raw) {
			if len(s.Choices) > 0 {
				v = strings.ToLower(v)
				if !slices.Contains(s.Choices, v) {
					return fmt.Errorf("invalid choice %q (choose from %s)", v, strings.Join(s.Choices, ", "))
				}
			}
			*p = append(*p, v)
		}
	case *time.Duration:
		v, err := time.ParseDuration(raw)
		if err != nil {
			if n, ierr := strconv.ParseFloat(raw, 64); ierr == nil {
				v = time.Duration(n * float64(time.Second))
			} else {
				return fmt.Errorf("invalid duration %q (e.g. 90s, 5m, 1h30m)", raw)
			}
		}
		if v <= 0 {
			return fmt.Errorf("duration must be positive, got %q", raw)
		}
		*p = v
	default:
		return fmt.Errorf("internal error: option %s has no settable field", s.Flag())
	}
	c.markSet(s.Dest)
	return nil
}

// splitList splits one command-line token of a list option. Output formats
// accept rocprofv3's separators (the tool tokenizes on space, tab, comma,
// semicolon and colon); other lists keep the token whole, as argparse does.
func splitList(s *Spec, raw string) []string {
	if s.Dest != "output_format" {
		return []string{raw}
	}
	return strings.FieldsFunc(raw, func(r rune) bool {
		return r == ',' || r == ';' || r == ':' || r == ' ' || r == '\t'
	})
}

func parseInt(raw string) (int, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(raw), 0, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid integer %q", raw)
	}
	return int(v), nil
}

// valueString renders an option's current value for --echo and config dumps.
func (s *Spec) valueString(c *Config) string {
	switch p := s.Field(c).(type) {
	case *Tri:
		return p.String()
	case *string:
		return *p
	case *int:
		return strconv.Itoa(*p)
	case *uint64:
		return strconv.FormatUint(*p, 10)
	case *[]string:
		return strings.Join(*p, " ")
	case *time.Duration:
		return p.String()
	}
	return ""
}
