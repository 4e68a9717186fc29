// What every console page does: name the signed-in user (GET me) and sign
// out (DELETE /api/mobile/auth/session, which revokes the cookie's session).
import { call, graph } from '/assets/ui/api.js';

graph.get('me').then((me) => {
  const who = document.getElementById('who');
  if (me && me.name) who.textContent = `Signed in as ${me.name}` + (who.textContent.includes('(staff)') ? ' (staff)' : '');
}).catch(() => {});

document.getElementById('sign-out').addEventListener('click', async () => {
  try { await call('DELETE', '/api/mobile/auth/session'); } finally { location.assign('/login'); }
});
