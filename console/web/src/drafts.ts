// Text typed into a page's forms when the session ends under it (idle, or ended elsewhere): kept
// in this tab's memory, never in storage, while the user logs in again, and put back when the same
// page is drawn after the login. A note or a report narrative is not lost to a timeout.
interface Draft {
  path: string;
  fields: Array<{ id: string; name: string; value: string }>;
}

let kept: Draft | undefined;

// Keeps what the page's text areas hold; whether there was anything to keep.
export function keepDrafts(path: string): boolean {
  const fields = [...document.querySelectorAll<HTMLTextAreaElement>('#view textarea')]
    .filter((area) => area.value.trim() !== '')
    .map((area) => ({ id: area.id, name: area.name, value: area.value }));
  kept = fields.length > 0 ? { path, fields } : undefined;
  return kept !== undefined;
}

// Puts kept text back once its page is drawn again, into areas still empty.
export function restoreDrafts(path: string): void {
  if (!kept || kept.path !== path) return;
  const draft = kept;
  kept = undefined;
  const areas = [...document.querySelectorAll<HTMLTextAreaElement>('#view textarea')];
  for (const field of draft.fields) {
    const area = areas.find((a) => (field.id !== '' ? a.id === field.id : a.name === field.name));
    if (area && area.value === '') area.value = field.value;
  }
}
