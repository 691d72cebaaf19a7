-- How many processes an allocation's agents run: 0 for one per slot (the
-- default and every allocation before this column), else one per agent
-- (per-node launch, and tasks that are not trials). A restarted master
-- needs it to know which ranks to wait for and where each one runs.
ALTER TABLE allocations ADD COLUMN processes INTEGER NOT NULL DEFAULT 0;
