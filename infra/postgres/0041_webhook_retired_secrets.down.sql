DROP TABLE webhook_retired_secrets;
