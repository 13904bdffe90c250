CREATE TABLE "appointment" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"name" text,
	"description" text,
	"external_id" text,
	"status_key" text,
	"type_key" text,
	"assignee_id" uuid,
	"contact_id" uuid,
	"start_time" timestamp with time zone,
	"end_time" timestamp with time zone,
	"confirmed_at" timestamp with time zone,
	"cancelled_at" timestamp with time zone,
	"location_id" uuid,
	CONSTRAINT "appointment_pkey" PRIMARY KEY("organisation_id","id"),
	CONSTRAINT "appointment_external_id_key" UNIQUE("organisation_id","external_id")
);
--> statement-breakpoint
CREATE TABLE "appointment_custom_field" (
	"appointment_id" uuid NOT NULL,
	"custom_field_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"key" text,
	"value" text,
	"date_value" date,
	"string_value" text,
	"number_value" numeric,
	"boolean_value" boolean,
	"datetime_value" timestamp with time zone,
	"string_list_value" text[],
	CONSTRAINT "appointment_custom_field_pkey" PRIMARY KEY("organisation_id","appointment_id","custom_field_id")
);
--> statement-breakpoint
CREATE TABLE "appointment_type" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"name" text,
	"key" text,
	"emoji" text,
	"description" text,
	"external_id" text,
	CONSTRAINT "appointment_type_pkey" PRIMARY KEY("organisation_id","id"),
	CONSTRAINT "appointment_type_external_id_key" UNIQUE("organisation_id","external_id"),
	CONSTRAINT "appointment_type_key_key" UNIQUE("organisation_id","key")
);
--> statement-breakpoint
CREATE TABLE "calendar" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"name" text,
	"type" text DEFAULT 'virtual' NOT NULL,
	"external_id" text,
	CONSTRAINT "calendar_pkey" PRIMARY KEY("organisation_id","id"),
	CONSTRAINT "calendar_external_id_key" UNIQUE("organisation_id","external_id"),
	CONSTRAINT "calendar_type_check" CHECK ("calendar"."type" in ('virtual', 'provider'))
);
--> statement-breakpoint
CREATE TABLE "campaign" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"name" text,
	CONSTRAINT "campaign_pkey" PRIMARY KEY("organisation_id","id")
);
--> statement-breakpoint
CREATE TABLE "contact" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"full_name" text,
	"fts" text,
	"is_blocked" boolean DEFAULT false,
	"external_id" text,
	"secondary_external_id" text,
	"birthday" date,
	"salutation" text,
	"email" text,
	"sms" text,
	"whatsapp" text,
	"instagram" text,
	"facebook" text,
	"google_business_messaging" text,
	"postal" text,
	"display_name" text,
	"address_line1" text,
	"address_line2" text,
	"city" text,
	"zipcode" text,
	"country" text,
	"number_of_marketing_opt_in_requests" integer DEFAULT 0,
	"latest_marketing_opt_in_request_sent_at" timestamp with time zone,
	"campaign_messages_this_month" integer DEFAULT 0,
	"whatsapp_marketing_opt_in" boolean,
	"whatsapp_transactional_opt_in" text,
	"sms_marketing_opt_in" boolean,
	"sms_transactional_opt_in" text,
	"email_marketing_opt_in" boolean,
	"email_transactional_opt_in" text,
	"facebook_marketing_opt_in" boolean,
	"facebook_transactional_opt_in" text,
	"instagram_marketing_opt_in" boolean,
	"instagram_transactional_opt_in" text,
	"google_business_messaging_marketing_opt_in" boolean,
	"google_business_messaging_transactional_opt_in" text,
	"postal_marketing_opt_in" boolean,
	"postal_transactional_opt_in" text,
	CONSTRAINT "contact_pkey" PRIMARY KEY("organisation_id","id"),
	CONSTRAINT "contact_external_id_key" UNIQUE("organisation_id","external_id"),
	CONSTRAINT "contact_whatsapp_transactional_opt_in_check" CHECK ("contact"."whatsapp_transactional_opt_in" in ('legitimate_interest', 'contract_fulfillment', 'consent_granted')),
	CONSTRAINT "contact_sms_transactional_opt_in_check" CHECK ("contact"."sms_transactional_opt_in" in ('legitimate_interest', 'contract_fulfillment', 'consent_granted')),
	CONSTRAINT "contact_email_transactional_opt_in_check" CHECK ("contact"."email_transactional_opt_in" in ('legitimate_interest', 'contract_fulfillment', 'consent_granted')),
	CONSTRAINT "contact_facebook_transactional_opt_in_check" CHECK ("contact"."facebook_transactional_opt_in" in ('legitimate_interest', 'contract_fulfillment', 'consent_granted')),
	CONSTRAINT "contact_instagram_transactional_opt_in_check" CHECK ("contact"."instagram_transactional_opt_in" in ('legitimate_interest', 'contract_fulfillment', 'consent_granted')),
	CONSTRAINT "contact_google_business_messaging_transactional_opt_in_check" CHECK ("contact"."google_business_messaging_transactional_opt_in" in ('legitimate_interest', 'contract_fulfillment', 'consent_granted')),
	CONSTRAINT "contact_postal_transactional_opt_in_check" CHECK ("contact"."postal_transactional_opt_in" in ('legitimate_interest', 'contract_fulfillment', 'consent_granted'))
);
--> statement-breakpoint
CREATE TABLE "contact_custom_field" (
	"contact_id" uuid NOT NULL,
	"custom_field_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"key" text,
	"value" text,
	"date_value" date,
	"string_value" text,
	"number_value" numeric,
	"boolean_value" boolean,
	"datetime_value" timestamp with time zone,
	"string_list_value" text[],
	CONSTRAINT "contact_custom_field_pkey" PRIMARY KEY("organisation_id","contact_id","custom_field_id")
);
--> statement-breakpoint
CREATE TABLE "contact_note" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"contact_id" uuid,
	"text" text,
	"created_by_id" uuid,
	CONSTRAINT "contact_note_pkey" PRIMARY KEY("organisation_id","id")
);
--> statement-breakpoint
CREATE TABLE "custom_entity" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"custom_entity_definition_id" uuid,
	"contact_id" uuid,
	"external_id" text,
	"data" jsonb,
	CONSTRAINT "custom_entity_pkey" PRIMARY KEY("organisation_id","id"),
	CONSTRAINT "custom_entity_external_id_key" UNIQUE("organisation_id","external_id")
);
--> statement-breakpoint
CREATE TABLE "custom_entity_definition" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"name" text,
	"key" text,
	"schema" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "custom_entity_definition_pkey" PRIMARY KEY("organisation_id","id"),
	CONSTRAINT "custom_entity_definition_key_key" UNIQUE("organisation_id","key")
);
--> statement-breakpoint
CREATE TABLE "custom_field" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"name" text,
	"description" text,
	"type" text NOT NULL,
	"key" text NOT NULL,
	"entity" text NOT NULL,
	CONSTRAINT "custom_field_pkey" PRIMARY KEY("organisation_id","id"),
	CONSTRAINT "custom_field_entity_key_key" UNIQUE("organisation_id","entity","key"),
	CONSTRAINT "custom_field_type_check" CHECK ("custom_field"."type" in ('string', 'datetime', 'boolean', 'number', 'date', 'string_list')),
	CONSTRAINT "custom_field_entity_check" CHECK ("custom_field"."entity" in ('contact', 'deal', 'appointment'))
);
--> statement-breakpoint
CREATE TABLE "deal" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"contact_id" uuid,
	"name" text,
	"external_id" text,
	"type_key" text,
	"status_key" text,
	"assignee_id" uuid,
	"value" numeric,
	"currency" text,
	"won_at" timestamp with time zone,
	"lost_at" timestamp with time zone,
	CONSTRAINT "deal_pkey" PRIMARY KEY("organisation_id","id"),
	CONSTRAINT "deal_external_id_key" UNIQUE("organisation_id","external_id"),
	CONSTRAINT "deal_currency_check" CHECK ("deal"."currency" in ('EUR', 'CHF', 'USD'))
);
--> statement-breakpoint
CREATE TABLE "deal_custom_field" (
	"deal_id" uuid NOT NULL,
	"custom_field_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"key" text,
	"value" text,
	"date_value" date,
	"string_value" text,
	"number_value" numeric,
	"boolean_value" boolean,
	"datetime_value" timestamp with time zone,
	"string_list_value" text[],
	CONSTRAINT "deal_custom_field_pkey" PRIMARY KEY("organisation_id","deal_id","custom_field_id")
);
--> statement-breakpoint
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
CREATE TABLE "organisation" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "segment" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"name" text,
	"is_default" boolean DEFAULT false,
	CONSTRAINT "segment_pkey" PRIMARY KEY("organisation_id","id")
);
--> statement-breakpoint
ALTER TABLE "appointment" ADD CONSTRAINT "appointment_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "appointment" ADD CONSTRAINT "appointment_contact_fkey" FOREIGN KEY ("organisation_id","contact_id") REFERENCES "public"."contact"("organisation_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "appointment_custom_field" ADD CONSTRAINT "appointment_custom_field_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "appointment_custom_field" ADD CONSTRAINT "appointment_custom_field_parent_fkey" FOREIGN KEY ("organisation_id","appointment_id") REFERENCES "public"."appointment"("organisation_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "appointment_custom_field" ADD CONSTRAINT "appointment_custom_field_custom_field_fkey" FOREIGN KEY ("organisation_id","custom_field_id") REFERENCES "public"."custom_field"("organisation_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "appointment_type" ADD CONSTRAINT "appointment_type_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "calendar" ADD CONSTRAINT "calendar_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign" ADD CONSTRAINT "campaign_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contact" ADD CONSTRAINT "contact_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contact_custom_field" ADD CONSTRAINT "contact_custom_field_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contact_custom_field" ADD CONSTRAINT "contact_custom_field_parent_fkey" FOREIGN KEY ("organisation_id","contact_id") REFERENCES "public"."contact"("organisation_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contact_custom_field" ADD CONSTRAINT "contact_custom_field_custom_field_fkey" FOREIGN KEY ("organisation_id","custom_field_id") REFERENCES "public"."custom_field"("organisation_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contact_note" ADD CONSTRAINT "contact_note_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contact_note" ADD CONSTRAINT "contact_note_contact_fkey" FOREIGN KEY ("organisation_id","contact_id") REFERENCES "public"."contact"("organisation_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custom_entity" ADD CONSTRAINT "custom_entity_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custom_entity" ADD CONSTRAINT "custom_entity_definition_fkey" FOREIGN KEY ("organisation_id","custom_entity_definition_id") REFERENCES "public"."custom_entity_definition"("organisation_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custom_entity" ADD CONSTRAINT "custom_entity_contact_fkey" FOREIGN KEY ("organisation_id","contact_id") REFERENCES "public"."contact"("organisation_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custom_entity_definition" ADD CONSTRAINT "custom_entity_definition_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custom_field" ADD CONSTRAINT "custom_field_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deal" ADD CONSTRAINT "deal_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deal" ADD CONSTRAINT "deal_contact_fkey" FOREIGN KEY ("organisation_id","contact_id") REFERENCES "public"."contact"("organisation_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deal_custom_field" ADD CONSTRAINT "deal_custom_field_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deal_custom_field" ADD CONSTRAINT "deal_custom_field_parent_fkey" FOREIGN KEY ("organisation_id","deal_id") REFERENCES "public"."deal"("organisation_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deal_custom_field" ADD CONSTRAINT "deal_custom_field_custom_field_fkey" FOREIGN KEY ("organisation_id","custom_field_id") REFERENCES "public"."custom_field"("organisation_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "file" ADD CONSTRAINT "file_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "file_chunk" ADD CONSTRAINT "file_chunk_file_fkey" FOREIGN KEY ("organisation_id","file_id") REFERENCES "public"."file"("organisation_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "import_job" ADD CONSTRAINT "import_job_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "import_job" ADD CONSTRAINT "import_job_file_fkey" FOREIGN KEY ("organisation_id","file_id") REFERENCES "public"."file"("organisation_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "segment" ADD CONSTRAINT "segment_organisation_id_organisation_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisation"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "appointment_start_time_idx" ON "appointment" USING btree ("organisation_id","start_time");--> statement-breakpoint
CREATE INDEX "appointment_contact_id_idx" ON "appointment" USING btree ("organisation_id","contact_id");--> statement-breakpoint
CREATE INDEX "appointment_custom_field_custom_field_idx" ON "appointment_custom_field" USING btree ("organisation_id","custom_field_id");--> statement-breakpoint
CREATE INDEX "calendar_created_at_idx" ON "calendar" USING btree ("organisation_id","created_at");--> statement-breakpoint
CREATE INDEX "calendar_updated_at_idx" ON "calendar" USING btree ("organisation_id","updated_at");--> statement-breakpoint
CREATE INDEX "calendar_name_idx" ON "calendar" USING btree ("organisation_id","name");--> statement-breakpoint
CREATE INDEX "contact_created_at_id_idx" ON "contact" USING btree ("organisation_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contact_display_name_idx" ON "contact" USING btree ("organisation_id","display_name");--> statement-breakpoint
CREATE INDEX "contact_email_idx" ON "contact" USING btree ("organisation_id","email");--> statement-breakpoint
CREATE INDEX "contact_custom_field_custom_field_idx" ON "contact_custom_field" USING btree ("organisation_id","custom_field_id");--> statement-breakpoint
CREATE INDEX "contact_note_contact_id_idx" ON "contact_note" USING btree ("organisation_id","contact_id");--> statement-breakpoint
CREATE INDEX "custom_entity_contact_id_idx" ON "custom_entity" USING btree ("organisation_id","contact_id");--> statement-breakpoint
CREATE INDEX "deal_won_at_idx" ON "deal" USING btree ("organisation_id","won_at");--> statement-breakpoint
CREATE INDEX "deal_lost_at_idx" ON "deal" USING btree ("organisation_id","lost_at");--> statement-breakpoint
CREATE INDEX "deal_contact_id_idx" ON "deal" USING btree ("organisation_id","contact_id");--> statement-breakpoint
CREATE INDEX "deal_custom_field_custom_field_idx" ON "deal_custom_field" USING btree ("organisation_id","custom_field_id");--> statement-breakpoint
CREATE INDEX "import_job_queue_idx" ON "import_job" USING btree ("status","created_at");