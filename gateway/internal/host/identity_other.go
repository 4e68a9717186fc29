//go:build !linux

package host

import "os"

// identityOf is a file's size and modification time here: device, inode
// and status change time are not read on this system.
func identityOf(fi os.FileInfo) fileIdentity {
	return fileIdentity{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
}
