-- Why each allocation ended, as a type the master decides on
-- (common/end_cause.h); exit_reason stays the detail people read. Rows of
-- allocations that ended before this column existed get the cause their
-- exit reason's words name.
ALTER TABLE allocations ADD COLUMN end_cause TEXT CHECK (end_cause IN (
  'COMPLETED', 'FAILED', 'GANG_MEMBER_FAILED', 'USER_KILL', 'PAUSED', 'PREEMPTED', 'AGENT_LOST',
  'AGENT_RESTARTED', 'INVALID_HPARAMS', 'EXITED_EARLY', 'FENCED_OUT'));

UPDATE allocations SET end_cause = CASE
    WHEN exit_reason LIKE 'invalid hyperparameters%' THEN 'INVALID_HPARAMS'
    WHEN exit_reason = 'killed by user' THEN 'USER_KILL'
    WHEN exit_reason = 'paused' THEN 'PAUSED'
    WHEN exit_reason = 'preempted' THEN 'PREEMPTED'
    WHEN exit_reason = 'agent lost' THEN 'AGENT_LOST'
    WHEN exit_reason LIKE 'agent restarted%' THEN 'AGENT_RESTARTED'
    WHEN exit_reason = 'exited with code 0' THEN 'COMPLETED'
    ELSE 'FAILED'
  END
  WHERE state = 'TERMINATED';
