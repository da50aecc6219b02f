import './style.css';
import { ApiError, currentSession, get, handleAuthProblems, setSession, type SessionBody } from './api.ts';
import { ensureAssets } from './format/assets.ts';
import { keepDrafts } from './drafts.ts';
import { drawHeader } from './header.ts';
import { navigate, render, route, startRouter } from './router.ts';
import { alertQueueView } from './views/alerts.ts';
import { alertView } from './views/alert.ts';
import { breakQueueView, breakView } from './views/breaks.ts';
import { caseView } from './views/case.ts';
import { caseInboxView } from './views/cases.ts';
import { episodeView } from './views/episode.ts';
import { loginView, passwordView } from './views/login.ts';
import { networkView } from './views/network.ts';
import { partyView } from './views/party.ts';
import { pathsView } from './views/paths.ts';

// Routes that need no session.
const PUBLIC = new Set(['/console/login']);

handleAuthProblems((error: ApiError) => {
  if (error.code === 'svc:console/password_change_required') navigate('/console/password', { replace: true });
  else {
    // A session this tab held has ended (not a first visit without one): say so, keeping the text.
    const ended = currentSession() !== null && currentSession() !== undefined;
    setSession(null);
    drawHeader();
    if (!PUBLIC.has(location.pathname)) {
      const notice = ended ? `&ended=${keepDrafts(location.pathname) ? 'kept' : 'yes'}` : '';
      navigate(`/console/login?next=${encodeURIComponent(location.pathname + location.search)}${notice}`, { replace: true });
    }
  }
});

// Views behind the session: who-am-I once per page load, then the password change if pending.
const guarded =
  (view: Parameters<typeof route>[1]): Parameters<typeof route>[1] =>
  async (params, query) => {
    if (!currentSession()) {
      try {
        setSession(await get<SessionBody>('/session'));
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return;
        throw error;
      }
      drawHeader();
    }
    if (currentSession()!.user.must_change_password && location.pathname !== '/console/password') {
      navigate('/console/password', { replace: true });
      return;
    }
    // Until the one-time password is changed the API answers nothing else (the asset list
    // included), and a refusal there would send the user back here without the ?next= target.
    if (!currentSession()!.user.must_change_password) await ensureAssets();
    return view(params, query);
  };

route(/^\/console\/login$/, loginView);
route(/^\/console\/password$/, guarded(passwordView));
route(/^\/console(?:\/cases)?$/, guarded(caseInboxView));
route(/^\/console\/cases\/([^/]+)$/, guarded(caseView));
route(/^\/console\/alerts$/, guarded(alertQueueView));
route(/^\/console\/alerts\/([^/]+)$/, guarded(alertView));
route(/^\/console\/episodes\/([^/]+)$/, guarded(episodeView));
route(/^\/console\/parties\/([^/]+)$/, guarded(partyView));
route(/^\/console\/network\/([^/]+)$/, guarded(networkView));
route(/^\/console\/paths$/, guarded(pathsView));
route(/^\/console\/breaks$/, guarded(breakQueueView));
route(/^\/console\/breaks\/([^/]+)$/, guarded(breakView));

drawHeader();
startRouter();
void render();
