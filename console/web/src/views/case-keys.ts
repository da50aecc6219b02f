import { navigate, type Cleanup } from '../router.ts';

// The inbox's keyboard map, the alert queue's (docs/decisions/0019-console-web.md) plus x:
// j / ↓ next row, k / ↑ previous row, Enter or o opens, x ticks the row's checkbox (supervisor),
// n next page, p previous page, / the filters. Keys typed into a form field are the field's.
export interface ListKeys {
  rows: () => HTMLTableRowElement[];
  nextHref: () => string | null;
  hasPrevious: boolean;
  filters: () => HTMLElement | null;
}

export function listKeys(keys: ListKeys): { choose: (i: number) => void; cleanup: Cleanup } {
  let selected = 0;
  const choose = (i: number) => {
    const rows = keys.rows();
    if (rows.length === 0) return;
    selected = Math.max(0, Math.min(rows.length - 1, i));
    rows.forEach((r, j) => r.setAttribute('aria-selected', String(j === selected)));
    rows[selected]!.focus();
  };
  const onKey = (event: KeyboardEvent) => {
    const target = event.target as HTMLElement | null;
    if (event.ctrlKey || event.metaKey || event.altKey || (target && /^(INPUT|SELECT|TEXTAREA|BUTTON)$/.test(target.tagName))) return;
    const row = keys.rows()[selected];
    const next = keys.nextHref();
    if (event.key === 'j' || event.key === 'ArrowDown') choose(selected + 1);
    else if (event.key === 'k' || event.key === 'ArrowUp') choose(selected - 1);
    else if ((event.key === 'Enter' || event.key === 'o') && row?.dataset.href) navigate(row.dataset.href);
    else if (event.key === 'x' && row?.querySelector('input[type=checkbox]')) row.querySelector<HTMLInputElement>('input[type=checkbox]')!.click();
    else if (event.key === 'n' && next) navigate(next);
    else if (event.key === 'p' && keys.hasPrevious) history.back();
    else if (event.key === '/' && keys.filters()) keys.filters()!.querySelector<HTMLElement>('select, input')?.focus();
    else return;
    event.preventDefault();
  };
  document.addEventListener('keydown', onKey);
  return { choose, cleanup: () => document.removeEventListener('keydown', onKey) };
}
