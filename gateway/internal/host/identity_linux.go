package host

import (
	"os"
	"syscall"
)

// identityOf is what tells one file from another at a path: its device and
// inode (a binary replaced by mv has a new one even when its size and time
// match the old), its size and modification time, and its status change
// time, which a writer cannot set: a binary rewritten in place has a new
// one even when its modification time is put back.
func identityOf(fi os.FileInfo) fileIdentity {
	id := fileIdentity{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.Dev, id.Ino = uint64(st.Dev), st.Ino
		id.Ctime = st.Ctim.Nano()
	}
	return id
}
