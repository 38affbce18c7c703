-- A database as switchboard left it before its migrations were read by
-- goose's own SQL parser: migrations 1 to 20 applied by the previous
-- migration reader, and one user message stored. Made with
-- pg_dump --inserts --no-owner --no-privileges --no-comments; psql's
-- \restrict lines removed so that it runs as one simple query.
--
-- PostgreSQL database dump
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: agent_docs_notify(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.agent_docs_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
	PERFORM pg_notify('agent_docs', '');
	RETURN NULL;
END
$$;


--
-- Name: delete_session_messages(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.delete_session_messages() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM messages WHERE session_key = OLD.key;
    RETURN OLD;
END
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: access_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.access_requests (
    id text NOT NULL,
    identity text NOT NULL,
    display_name text DEFAULT ''::text NOT NULL,
    platform text NOT NULL,
    chat_id text DEFAULT ''::text NOT NULL,
    thread_id text DEFAULT ''::text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    decided_by text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    decided_at timestamp with time zone,
    CONSTRAINT access_requests_id_check CHECK ((id <> ''::text)),
    CONSTRAINT access_requests_identity_check CHECK ((identity <> ''::text)),
    CONSTRAINT access_requests_platform_check CHECK ((platform <> ''::text)),
    CONSTRAINT access_requests_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'approved'::text, 'denied'::text])))
);


--
-- Name: agent_docs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.agent_docs (
    agent text NOT NULL,
    scope text DEFAULT ''::text NOT NULL,
    path text NOT NULL,
    content text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, ((replace(path, '/'::text, ' '::text) || ' '::text) || content))) STORED,
    embedding real[]
);


--
-- Name: allow_always; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.allow_always (
    tool text NOT NULL,
    pattern text NOT NULL,
    created_by text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT allow_always_pattern_check CHECK ((pattern <> ''::text)),
    CONSTRAINT allow_always_tool_check CHECK ((tool <> ''::text))
);


--
-- Name: approvals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.approvals (
    id text NOT NULL,
    tool text NOT NULL,
    command text DEFAULT ''::text NOT NULL,
    cwd text DEFAULT ''::text NOT NULL,
    pattern text DEFAULT ''::text NOT NULL,
    agent text DEFAULT ''::text NOT NULL,
    session_key text,
    tool_call_id text,
    requester text DEFAULT ''::text NOT NULL,
    platform text DEFAULT ''::text NOT NULL,
    chat_id text DEFAULT ''::text NOT NULL,
    thread_id text DEFAULT ''::text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    decided_by text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    decided_at timestamp with time zone,
    consumed_at timestamp with time zone,
    warnings text[] DEFAULT '{}'::text[] NOT NULL,
    CONSTRAINT approvals_id_check CHECK ((id <> ''::text)),
    CONSTRAINT approvals_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'allowed_once'::text, 'allowed_always'::text, 'denied'::text, 'expired'::text, 'cancelled'::text]))),
    CONSTRAINT approvals_tool_check CHECK ((tool <> ''::text))
);


--
-- Name: audit_log; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_log (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor text DEFAULT ''::text NOT NULL,
    action text NOT NULL,
    subject_kind text DEFAULT ''::text NOT NULL,
    subject_id text DEFAULT ''::text NOT NULL,
    detail jsonb,
    CONSTRAINT audit_log_action_check CHECK ((action <> ''::text))
);


--
-- Name: audit_log_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.audit_log_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: audit_log_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.audit_log_id_seq OWNED BY public.audit_log.id;


--
-- Name: custom_tools; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.custom_tools (
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    parameters jsonb NOT NULL,
    command text NOT NULL,
    timeout_ms bigint DEFAULT 0 NOT NULL,
    env jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: decision_messages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.decision_messages (
    kind text NOT NULL,
    subject_id text NOT NULL,
    outbox_id bigint NOT NULL,
    role text DEFAULT ''::text NOT NULL,
    CONSTRAINT decision_messages_kind_check CHECK ((kind <> ''::text)),
    CONSTRAINT decision_messages_subject_id_check CHECK ((subject_id <> ''::text))
);


--
-- Name: goose_db_version; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.goose_db_version (
    id integer NOT NULL,
    version_id bigint NOT NULL,
    is_applied boolean NOT NULL,
    tstamp timestamp without time zone DEFAULT now() NOT NULL
);


--
-- Name: goose_db_version_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.goose_db_version ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.goose_db_version_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: grant_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.grant_requests (
    id text NOT NULL,
    server text NOT NULL,
    tool text NOT NULL,
    agent text NOT NULL,
    subject_kind text NOT NULL,
    subject text NOT NULL,
    platform text DEFAULT ''::text NOT NULL,
    chat_id text DEFAULT ''::text NOT NULL,
    thread_id text DEFAULT ''::text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    decided_by text,
    decided_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT grant_requests_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'approved'::text, 'denied'::text]))),
    CONSTRAINT grant_requests_subject_kind_check CHECK ((subject_kind = ANY (ARRAY['agent'::text, 'user'::text])))
);


--
-- Name: handoff_routes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.handoff_routes (
    address text NOT NULL,
    agent text NOT NULL,
    from_agent text DEFAULT ''::text NOT NULL,
    reason text DEFAULT ''::text NOT NULL,
    set_by text DEFAULT ''::text NOT NULL,
    set_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL
);


--
-- Name: identities; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.identities (
    identity text NOT NULL,
    display_name text DEFAULT ''::text NOT NULL,
    allowed boolean DEFAULT false NOT NULL,
    allowed_by text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: job_runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.job_runs (
    id bigint NOT NULL,
    job_id bigint NOT NULL,
    scheduled_at timestamp with time zone NOT NULL,
    status text NOT NULL,
    lease_owner text DEFAULT ''::text NOT NULL,
    lease_until timestamp with time zone,
    attempts integer DEFAULT 0 NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    tokens_in bigint DEFAULT 0 NOT NULL,
    tokens_out bigint DEFAULT 0 NOT NULL,
    error text DEFAULT ''::text NOT NULL,
    CONSTRAINT job_runs_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'running'::text, 'succeeded'::text, 'failed'::text, 'skipped'::text])))
);


--
-- Name: job_runs_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.job_runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: job_runs_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.job_runs_id_seq OWNED BY public.job_runs.id;


--
-- Name: jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.jobs (
    id bigint NOT NULL,
    name text NOT NULL,
    schedule text NOT NULL,
    timezone text DEFAULT ''::text NOT NULL,
    agent text DEFAULT ''::text NOT NULL,
    prompt text NOT NULL,
    platform text NOT NULL,
    chat_id text NOT NULL,
    thread_id text DEFAULT ''::text NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    overlap text DEFAULT 'skip'::text NOT NULL,
    catch_up text DEFAULT 'last'::text NOT NULL,
    created_by text DEFAULT ''::text NOT NULL,
    source text DEFAULT 'chat'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT jobs_catch_up_check CHECK ((catch_up = ANY (ARRAY['none'::text, 'last'::text]))),
    CONSTRAINT jobs_chat_id_check CHECK ((chat_id <> ''::text)),
    CONSTRAINT jobs_name_check CHECK ((name <> ''::text)),
    CONSTRAINT jobs_overlap_check CHECK ((overlap = ANY (ARRAY['skip'::text, 'queue'::text]))),
    CONSTRAINT jobs_platform_check CHECK ((platform <> ''::text)),
    CONSTRAINT jobs_schedule_check CHECK ((schedule <> ''::text))
);


--
-- Name: jobs_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: jobs_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.jobs_id_seq OWNED BY public.jobs.id;


--
-- Name: mcp_servers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mcp_servers (
    name text NOT NULL,
    transport text NOT NULL,
    command text[] DEFAULT '{}'::text[] NOT NULL,
    url text DEFAULT ''::text NOT NULL,
    env jsonb DEFAULT '{}'::jsonb NOT NULL,
    headers jsonb DEFAULT '{}'::jsonb NOT NULL,
    allow text[] DEFAULT '{}'::text[] NOT NULL,
    deny text[] DEFAULT '{}'::text[] NOT NULL,
    grant_agents text[] DEFAULT '{}'::text[] NOT NULL,
    grant_users text[] DEFAULT '{}'::text[] NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT mcp_servers_transport_check CHECK ((transport = ANY (ARRAY['stdio'::text, 'sse'::text, 'http'::text])))
);


--
-- Name: messages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.messages (
    session_key text NOT NULL,
    seq bigint NOT NULL,
    role text NOT NULL,
    content text DEFAULT ''::text NOT NULL,
    tool_calls jsonb,
    tool_call_id text DEFAULT ''::text NOT NULL,
    tool_name text DEFAULT ''::text NOT NULL,
    is_error boolean DEFAULT false NOT NULL,
    external_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT messages_role_check CHECK ((role <> ''::text))
);


--
-- Name: outbox; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.outbox (
    id bigint NOT NULL,
    session_key text,
    source_seq bigint,
    platform text NOT NULL,
    chat_id text NOT NULL,
    thread_id text DEFAULT ''::text NOT NULL,
    text text DEFAULT ''::text NOT NULL,
    buttons jsonb,
    reply_to text DEFAULT ''::text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    claimed_by text,
    claimed_until timestamp with time zone,
    platform_message_id text,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    sent_at timestamp with time zone,
    CONSTRAINT outbox_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'sent'::text, 'failed'::text])))
);


--
-- Name: outbox_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: outbox_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.outbox_id_seq OWNED BY public.outbox.id;


--
-- Name: replicas; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.replicas (
    owner text NOT NULL,
    seen_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sessions (
    key text NOT NULL,
    agent text NOT NULL,
    scope text NOT NULL,
    last_seq bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
)
WITH (fillfactor='70');


--
-- Name: team_task_comments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.team_task_comments (
    id bigint NOT NULL,
    task_id bigint NOT NULL,
    author text NOT NULL,
    kind text NOT NULL,
    text text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT team_task_comments_kind_check CHECK ((kind = ANY (ARRAY['note'::text, 'blocker'::text])))
);


--
-- Name: team_task_comments_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.team_task_comments_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: team_task_comments_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.team_task_comments_id_seq OWNED BY public.team_task_comments.id;


--
-- Name: team_tasks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.team_tasks (
    id bigint NOT NULL,
    team text NOT NULL,
    subject text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    priority integer DEFAULT 0 NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    blocked_by bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    assignee text DEFAULT ''::text NOT NULL,
    owner text DEFAULT ''::text NOT NULL,
    created_by text NOT NULL,
    result text DEFAULT ''::text NOT NULL,
    progress integer DEFAULT 0 NOT NULL,
    progress_note text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, ((subject || ' '::text) || description))) STORED,
    origin text DEFAULT ''::text NOT NULL,
    reported boolean DEFAULT false NOT NULL,
    CONSTRAINT team_tasks_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'blocked'::text, 'in_progress'::text, 'completed'::text, 'cancelled'::text, 'failed'::text])))
);


--
-- Name: team_tasks_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.team_tasks_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: team_tasks_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.team_tasks_id_seq OWNED BY public.team_tasks.id;


--
-- Name: tool_grants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_grants (
    id bigint NOT NULL,
    server text NOT NULL,
    subject_kind text NOT NULL,
    subject text NOT NULL,
    allow text[] DEFAULT '{}'::text[] NOT NULL,
    deny text[] DEFAULT '{}'::text[] NOT NULL,
    granted_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT tool_grants_subject_kind_check CHECK ((subject_kind = ANY (ARRAY['agent'::text, 'user'::text])))
);


--
-- Name: tool_grants_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.tool_grants_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: tool_grants_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.tool_grants_id_seq OWNED BY public.tool_grants.id;


--
-- Name: audit_log id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_log ALTER COLUMN id SET DEFAULT nextval('public.audit_log_id_seq'::regclass);


--
-- Name: job_runs id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.job_runs ALTER COLUMN id SET DEFAULT nextval('public.job_runs_id_seq'::regclass);


--
-- Name: jobs id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs ALTER COLUMN id SET DEFAULT nextval('public.jobs_id_seq'::regclass);


--
-- Name: outbox id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox ALTER COLUMN id SET DEFAULT nextval('public.outbox_id_seq'::regclass);


--
-- Name: team_task_comments id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.team_task_comments ALTER COLUMN id SET DEFAULT nextval('public.team_task_comments_id_seq'::regclass);


--
-- Name: team_tasks id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.team_tasks ALTER COLUMN id SET DEFAULT nextval('public.team_tasks_id_seq'::regclass);


--
-- Name: tool_grants id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_grants ALTER COLUMN id SET DEFAULT nextval('public.tool_grants_id_seq'::regclass);


--
-- Data for Name: access_requests; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: agent_docs; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: allow_always; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: approvals; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: audit_log; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: custom_tools; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: decision_messages; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: goose_db_version; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.goose_db_version VALUES (1, 0, true, '2026-12-01 22:44:24.063571');
INSERT INTO public.goose_db_version VALUES (2, 1, true, '2026-12-01 22:44:24.074404');
INSERT INTO public.goose_db_version VALUES (3, 2, true, '2026-12-01 22:44:24.131945');
INSERT INTO public.goose_db_version VALUES (4, 3, true, '2026-12-01 22:44:24.203983');
INSERT INTO public.goose_db_version VALUES (5, 4, true, '2026-12-01 22:44:24.244383');
INSERT INTO public.goose_db_version VALUES (6, 5, true, '2026-12-01 22:44:24.266503');
INSERT INTO public.goose_db_version VALUES (7, 6, true, '2026-12-01 22:44:24.29983');
INSERT INTO public.goose_db_version VALUES (8, 7, true, '2026-12-01 22:44:24.301848');
INSERT INTO public.goose_db_version VALUES (9, 8, true, '2026-12-01 22:44:24.313968');
INSERT INTO public.goose_db_version VALUES (10, 9, true, '2026-12-01 22:44:24.315405');
INSERT INTO public.goose_db_version VALUES (11, 10, true, '2026-12-01 22:44:24.32612');
INSERT INTO public.goose_db_version VALUES (12, 11, true, '2026-12-01 22:44:24.388325');
INSERT INTO public.goose_db_version VALUES (13, 12, true, '2026-12-01 22:44:24.394827');
INSERT INTO public.goose_db_version VALUES (14, 13, true, '2026-12-01 22:44:24.440422');
INSERT INTO public.goose_db_version VALUES (15, 14, true, '2026-12-01 22:44:24.44595');
INSERT INTO public.goose_db_version VALUES (16, 15, true, '2026-12-01 22:44:24.450202');
INSERT INTO public.goose_db_version VALUES (17, 16, true, '2026-12-01 22:44:24.456738');
INSERT INTO public.goose_db_version VALUES (18, 17, true, '2026-12-01 22:44:24.489435');
INSERT INTO public.goose_db_version VALUES (19, 18, true, '2026-12-01 22:44:24.490127');
INSERT INTO public.goose_db_version VALUES (20, 19, true, '2026-12-01 22:44:24.529794');
INSERT INTO public.goose_db_version VALUES (21, 20, true, '2026-12-01 22:44:24.541315');


--
-- Data for Name: grant_requests; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: handoff_routes; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: identities; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: job_runs; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: jobs; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: mcp_servers; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: messages; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.messages VALUES ('a/telegram:1', 1, 'user', 'kept through the upgrade', NULL, '', '', false, 'u1', '2026-12-01 22:44:24.544187+00');


--
-- Data for Name: outbox; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: replicas; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: sessions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.sessions VALUES ('a/telegram:1', 'a', 'telegram:1', 1, '2026-12-01 22:44:24.544187+00', '2026-12-01 22:44:24.544187+00');


--
-- Data for Name: team_task_comments; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: team_tasks; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: tool_grants; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Name: audit_log_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.audit_log_id_seq', 1, false);


--
-- Name: goose_db_version_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.goose_db_version_id_seq', 21, true);


--
-- Name: job_runs_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.job_runs_id_seq', 1, false);


--
-- Name: jobs_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.jobs_id_seq', 1, false);


--
-- Name: outbox_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.outbox_id_seq', 1, false);


--
-- Name: team_task_comments_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.team_task_comments_id_seq', 1, false);


--
-- Name: team_tasks_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.team_tasks_id_seq', 1, false);


--
-- Name: tool_grants_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.tool_grants_id_seq', 1, false);


--
-- Name: access_requests access_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.access_requests
    ADD CONSTRAINT access_requests_pkey PRIMARY KEY (id);


--
-- Name: agent_docs agent_docs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_docs
    ADD CONSTRAINT agent_docs_pkey PRIMARY KEY (agent, scope, path);


--
-- Name: allow_always allow_always_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.allow_always
    ADD CONSTRAINT allow_always_pkey PRIMARY KEY (tool, pattern);


--
-- Name: approvals approvals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.approvals
    ADD CONSTRAINT approvals_pkey PRIMARY KEY (id);


--
-- Name: audit_log audit_log_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_log
    ADD CONSTRAINT audit_log_pkey PRIMARY KEY (id);


--
-- Name: custom_tools custom_tools_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.custom_tools
    ADD CONSTRAINT custom_tools_pkey PRIMARY KEY (name);


--
-- Name: decision_messages decision_messages_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.decision_messages
    ADD CONSTRAINT decision_messages_pkey PRIMARY KEY (kind, subject_id, outbox_id);


--
-- Name: goose_db_version goose_db_version_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.goose_db_version
    ADD CONSTRAINT goose_db_version_pkey PRIMARY KEY (id);


--
-- Name: grant_requests grant_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.grant_requests
    ADD CONSTRAINT grant_requests_pkey PRIMARY KEY (id);


--
-- Name: handoff_routes handoff_routes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.handoff_routes
    ADD CONSTRAINT handoff_routes_pkey PRIMARY KEY (address);


--
-- Name: identities identities_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.identities
    ADD CONSTRAINT identities_pkey PRIMARY KEY (identity);


--
-- Name: job_runs job_runs_job_id_scheduled_at_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.job_runs
    ADD CONSTRAINT job_runs_job_id_scheduled_at_key UNIQUE (job_id, scheduled_at);


--
-- Name: job_runs job_runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.job_runs
    ADD CONSTRAINT job_runs_pkey PRIMARY KEY (id);


--
-- Name: jobs jobs_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_name_key UNIQUE (name);


--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);


--
-- Name: mcp_servers mcp_servers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mcp_servers
    ADD CONSTRAINT mcp_servers_pkey PRIMARY KEY (name);


--
-- Name: messages messages_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.messages
    ADD CONSTRAINT messages_pkey PRIMARY KEY (session_key, seq);


--
-- Name: outbox outbox_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox
    ADD CONSTRAINT outbox_pkey PRIMARY KEY (id);


--
-- Name: replicas replicas_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.replicas
    ADD CONSTRAINT replicas_pkey PRIMARY KEY (owner);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (key);


--
-- Name: team_task_comments team_task_comments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.team_task_comments
    ADD CONSTRAINT team_task_comments_pkey PRIMARY KEY (id);


--
-- Name: team_tasks team_tasks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.team_tasks
    ADD CONSTRAINT team_tasks_pkey PRIMARY KEY (id);


--
-- Name: tool_grants tool_grants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_grants
    ADD CONSTRAINT tool_grants_pkey PRIMARY KEY (id);


--
-- Name: tool_grants tool_grants_server_subject_kind_subject_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_grants
    ADD CONSTRAINT tool_grants_server_subject_kind_subject_key UNIQUE (server, subject_kind, subject);


--
-- Name: access_requests_denied_identity_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX access_requests_denied_identity_idx ON public.access_requests USING btree (identity, decided_at) WHERE (status = 'denied'::text);


--
-- Name: access_requests_pending_identity_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX access_requests_pending_identity_key ON public.access_requests USING btree (identity) WHERE (status = 'pending'::text);


--
-- Name: access_requests_platform_status_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX access_requests_platform_status_idx ON public.access_requests USING btree (platform, status);


--
-- Name: agent_docs_tsv_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX agent_docs_tsv_idx ON public.agent_docs USING gin (tsv);


--
-- Name: approvals_pending_expiry_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX approvals_pending_expiry_idx ON public.approvals USING btree (expires_at) WHERE (status = 'pending'::text);


--
-- Name: approvals_pending_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX approvals_pending_idx ON public.approvals USING btree (created_at, id) WHERE (status = 'pending'::text);


--
-- Name: approvals_pending_session_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX approvals_pending_session_idx ON public.approvals USING btree (session_key) WHERE (status = 'pending'::text);


--
-- Name: approvals_session_call_open_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX approvals_session_call_open_key ON public.approvals USING btree (session_key, tool_call_id) WHERE (consumed_at IS NULL);


--
-- Name: audit_log_subject_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_log_subject_idx ON public.audit_log USING btree (subject_kind, subject_id);


--
-- Name: decision_messages_outbox_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX decision_messages_outbox_idx ON public.decision_messages USING btree (outbox_id);


--
-- Name: grant_requests_one_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX grant_requests_one_pending ON public.grant_requests USING btree (server, tool, subject_kind, subject) WHERE (status = 'pending'::text);


--
-- Name: job_runs_open_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX job_runs_open_idx ON public.job_runs USING btree (lease_until) WHERE (status = ANY (ARRAY['pending'::text, 'running'::text]));


--
-- Name: messages_session_external_id_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX messages_session_external_id_key ON public.messages USING btree (session_key, external_id) WHERE (external_id IS NOT NULL);


--
-- Name: outbox_claim_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX outbox_claim_idx ON public.outbox USING btree (id, next_attempt_at) WHERE ((status = 'pending'::text) AND (next_attempt_at IS NOT NULL));


--
-- Name: outbox_pending_chat_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX outbox_pending_chat_idx ON public.outbox USING btree (platform, chat_id) WHERE (status = 'pending'::text);


--
-- Name: outbox_session_source_seq_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX outbox_session_source_seq_key ON public.outbox USING btree (session_key, source_seq) WHERE ((source_seq IS NOT NULL) AND (source_seq > 0));


--
-- Name: sessions_by_agent_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sessions_by_agent_idx ON public.sessions USING btree (agent);


--
-- Name: team_task_comments_task_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX team_task_comments_task_idx ON public.team_task_comments USING btree (task_id, id);


--
-- Name: team_tasks_blocked_by_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX team_tasks_blocked_by_idx ON public.team_tasks USING gin (blocked_by);


--
-- Name: team_tasks_board_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX team_tasks_board_idx ON public.team_tasks USING btree (team, status, priority DESC, created_at DESC);


--
-- Name: team_tasks_origin_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX team_tasks_origin_idx ON public.team_tasks USING btree (team, origin) WHERE (NOT reported);


--
-- Name: team_tasks_tsv_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX team_tasks_tsv_idx ON public.team_tasks USING gin (tsv);


--
-- Name: agent_docs agent_docs_notify; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER agent_docs_notify AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.agent_docs FOR EACH STATEMENT EXECUTE FUNCTION public.agent_docs_notify();


--
-- Name: sessions sessions_delete_messages; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER sessions_delete_messages AFTER DELETE ON public.sessions FOR EACH ROW EXECUTE FUNCTION public.delete_session_messages();


--
-- Name: decision_messages decision_messages_outbox_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.decision_messages
    ADD CONSTRAINT decision_messages_outbox_id_fkey FOREIGN KEY (outbox_id) REFERENCES public.outbox(id) ON DELETE CASCADE;


--
-- Name: job_runs job_runs_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.job_runs
    ADD CONSTRAINT job_runs_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.jobs(id) ON DELETE CASCADE;


--
-- Name: team_task_comments team_task_comments_task_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.team_task_comments
    ADD CONSTRAINT team_task_comments_task_id_fkey FOREIGN KEY (task_id) REFERENCES public.team_tasks(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--


