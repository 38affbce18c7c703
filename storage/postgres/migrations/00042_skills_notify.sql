-- +goose Up
-- Every change to skills or skill_states notifies channel skills, so a
-- replica that keeps the skill list in memory (SkillsCache) hears that
-- another one published, disabled or enabled a skill. One notice per
-- statement: listeners drop everything they keep.
-- +goose StatementBegin
CREATE FUNCTION skills_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('skills', '');
	RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER skills_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON skills
	FOR EACH STATEMENT EXECUTE FUNCTION skills_notify();
CREATE TRIGGER skill_states_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON skill_states
	FOR EACH STATEMENT EXECUTE FUNCTION skills_notify();

-- +goose Down
DROP TRIGGER IF EXISTS skill_states_notify ON skill_states;
DROP TRIGGER IF EXISTS skills_notify ON skills;
DROP FUNCTION IF EXISTS skills_notify();
