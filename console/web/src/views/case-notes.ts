import type { CaseNote, CaseNotePage, CaseNoteRequest } from '../../../../schemas/console/cases.ts';
import { enc, get, post } from '../api.ts';
import { empty, h, when } from '../dom.ts';

// The case's notes: append-only (no edit, no delete, by the API as here), each with its author and
// time; the form adds one and the list shows it without reloading the page.

const NOTE_MAX = 10_000;

const noteItem = (n: CaseNote) =>
  h('li', { 'data-note-id': n.note_id }, h('p', { class: 'note-meta' }, h('strong', null, n.author.email), ' · ', h('time', { datetime: n.created_at }, when(n.created_at))), h('p', { class: 'note-body' }, n.body));

// Every note of the case, following the cursor (a case holds tens of notes, not thousands).
export async function loadNotes(episodeId: string): Promise<CaseNote[]> {
  const notes: CaseNote[] = [];
  let cursor: string | undefined;
  do {
    const page: CaseNotePage = await get<CaseNotePage>(`/cases/${enc(episodeId)}/notes?limit=100${cursor ? `&cursor=${enc(cursor)}` : ''}`);
    notes.push(...page.data);
    cursor = page.has_more ? page.next_cursor : undefined;
  } while (cursor);
  return notes.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.note_id.localeCompare(b.note_id));
}

export function caseNotes(episodeId: string, notes: CaseNote[]): HTMLElement {
  const list = h('ol', { class: 'notes', 'data-testid': 'notes' }, notes.map(noteItem));
  const none = notes.length === 0 ? empty('No notes yet.') : null;
  const message = h('p', { class: 'state error', role: 'alert', hidden: true });
  const text = h('textarea', { name: 'body', id: 'note-body', rows: 3, maxlength: NOTE_MAX, required: true });
  const form = h(
    'form',
    { class: 'case-action note-form', 'aria-label': 'add a note', novalidate: true },
    h('label', { for: 'note-body' }, 'Add a note (notes cannot be edited or deleted)'),
    text,
    message,
    h('button', { type: 'submit' }, 'Add note'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = text.value.trim();
    message.hidden = true;
    if (body === '') {
      message.hidden = false;
      message.textContent = 'write something first';
      return;
    }
    const button = form.querySelector('button')!;
    button.disabled = true;
    try {
      const note = await post<CaseNote>(`/cases/${enc(episodeId)}/notes`, { body } satisfies CaseNoteRequest);
      none?.remove();
      list.append(noteItem(note));
      text.value = '';
    } catch (error) {
      message.hidden = false;
      message.textContent = error instanceof Error ? error.message : String(error);
    } finally {
      button.disabled = false;
    }
  });
  return h('section', { class: 'case-notes', 'aria-label': 'notes' }, none, list, form);
}
