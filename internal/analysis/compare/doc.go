// Package compare compares two runs kernel by kernel and API by API and
// decides, with a noise test, which names got slower: a name regresses when
// its metric (total, mean, median or p95 duration) rises by more than a
// relative threshold and by more than three standard errors estimated from
// the spread of its repeated calls. Reports render as text, a Markdown table
// for CI comments, JSON, or JUnit XML.
package compare
