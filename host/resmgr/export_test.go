package resmgr

// SaveBufferCap is the capacity of the buffer the saver keeps for the
// encoded journal.
func SaveBufferCap(m *Manager) int {
	m.saver.mu.Lock()
	defer m.saver.mu.Unlock()
	return cap(m.saver.buf)
}
