-- The inbox copy counts a disabled holder of a case that is not closed as nobody, as a Take does
-- (services/cases/inbox.ts): rows written before said otherwise (a closed case reopened since its
-- holder was disabled, or a user disabled before their open cases were released on disabling).
UPDATE case_inbox i SET assignee_user_id = NULL
  FROM console_users u
 WHERE i.open AND u.user_id = i.assignee_user_id AND u.disabled;
