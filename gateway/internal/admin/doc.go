// Package admin serves svc.admin.v1.AdminService, the operator's view of the
// running gateway: the loaded plugins and their hot reload. It takes the
// operator's admin token only (CONTRACT §11); app and user credentials are
// refused whatever their scopes.
package admin
