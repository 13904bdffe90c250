CREATE TABLE "file" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"content_type" text NOT NULL,
	"size" bigint DEFAULT 0 NOT NULL,
	"sha256" text,
	CONSTRAINT "file_pkey" PRIMARY KEY("organisation_id","id")
);
--> statement-breakpoint
CREATE TABLE "file_chunk" (
	"organisation_id" uuid NOT NULL,
	"file_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"data" text NOT NULL,
	CONSTRAINT "file_chunk_pkey" PRIMARY KEY("organisation_id","file_id","seq")
);
--> statement-breakpoint
CREATE TABLE "import_job" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"resource" text NOT NULL,
	"file_id" uuid NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"processed" integer DEFAULT 0 NOT NULL,
	"created" integer DEFAULT 0 NOT NULL,
	"updated" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"errors" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"error" text,
	"locked_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	CONSTRAINT "import_job_pkey" PRIMARY KEY("organisation_id","id"),
	CONSTRAINT "import_job_status_check" CHECK ("import_job"."status" in ('queued', 'running', 'succeeded', 'failed')),
	CONSTRAINT "import_job_resource_check" CHECK ("import_job"."resource" in ('contacts', 'deals', 'appointments'))
);
--> statement-breakpoint
ALTER TABLE "file" ADD CONSTRAINT "file_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "file_chunk" ADD CONSTRAINT "file_chunk_file_fkey" FOREIGN KEY ("organisation_id","file_id") REFERENCES "public"."file"("organisation_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "import_job" ADD CONSTRAINT "import_job_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "import_job" ADD CONSTRAINT "import_job_file_fkey" FOREIGN KEY ("organisation_id","file_id") REFERENCES "public"."file"("organisation_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "import_job_queue_idx" ON "import_job" USING btree ("status","created_at");