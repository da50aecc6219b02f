import { uuidv7 } from '../../../platform/ids.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';

// Case notes (infra/postgres/0024): append-only, so this module has no update or delete.

type Db = Pick<Pool, 'query'>;

export interface CaseNoteRow {
  note_id: string;
  episode_id: string;
  author_user_id: string;
  author_email: string;
  body: string;
  created_at: Date;
  // created_at at full precision, for page cursors.
  cursor_at: string;
}

export async function addCaseNote(db: Db, tenantId: string, episodeId: string, authorUserId: string, body: string, at: Date): Promise<string> {
  const noteId = uuidv7(at.getTime());
  await db.query('INSERT INTO case_notes (tenant_id, note_id, episode_id, author_user_id, body, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
    tenantId,
    noteId,
    episodeId,
    authorUserId,
    body,
    at,
  ]);
  return noteId;
}

const NOTE_COLUMNS = `n.note_id, n.episode_id, n.author_user_id, u.email AS author_email, n.body, n.created_at, n.created_at::text AS cursor_at`;

// Oldest first (a conversation reads down), after the given position.
export async function caseNotes(db: Db, tenantId: string, episodeId: string, after: { at: string; id: string } | undefined, limit: number): Promise<CaseNoteRow[]> {
  const { rows } = await db.query<CaseNoteRow>(
    `SELECT ${NOTE_COLUMNS} FROM case_notes n JOIN console_users u ON u.user_id = n.author_user_id
      WHERE n.tenant_id = $1 AND n.episode_id = $2 AND ($3::timestamptz IS NULL OR (n.created_at, n.note_id) > ($3::timestamptz, $4::uuid))
      ORDER BY n.created_at, n.note_id LIMIT $5`,
    [tenantId, episodeId, after?.at ?? null, after?.id ?? null, limit],
  );
  return rows;
}

export async function findCaseNote(db: Db, tenantId: string, noteId: string): Promise<CaseNoteRow | undefined> {
  const { rows } = await db.query<CaseNoteRow>(
    `SELECT ${NOTE_COLUMNS} FROM case_notes n JOIN console_users u ON u.user_id = n.author_user_id WHERE n.tenant_id = $1 AND n.note_id = $2`,
    [tenantId, noteId],
  );
  return rows[0];
}
