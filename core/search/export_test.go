package search

// WholeHybrid makes s answer hybrid searches as before (ranking, loading
// and fusing the whole match set) when on, the reference of the equality
// tests and the "before" of the benchmarks; it returns the undo.
func WholeHybrid(s *Service, on bool) (restore func()) {
	old := s.wholeHybrid
	s.wholeHybrid = on
	return func() { s.wholeHybrid = old }
}
