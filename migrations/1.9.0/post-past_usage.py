"""The usage reports include the answers given before usage rows existed.

Each assistant message with usage (its turn's tokens: input_tokens, output_tokens, total_tokens,
on the final reply only) gets one ai.usage row: dated when the answer was written, for its
conversation's user, assistant, provider and cloud service, in the user's company and its
currency, naming the assistant's model (or its provider's default), with the answer's rounds and
no cost (models had no prices then). The messages keep their usage as it was.

A turn that already has usage rows (written as it ran, or by an earlier run of this script: dated
between the turn's user message and its answer) gets none, so running the update again, or on a
database whose later turns recorded their own rows, counts nothing twice. One statement: a
database may hold many messages.
"""

import logging

_logger = logging.getLogger(__name__)

# A message's usage counts by name: a count that is not a non-negative number is 0, one beyond an
# integer column's range is capped. The turn's user message dates the start of the turn.
INSERT_PAST_USAGE = """
WITH answers AS (
    SELECT m.id, m.create_date, m.conversation_id, COALESCE(m.rounds, 0) AS rounds,
           count_of.input_tokens, count_of.cached_input_tokens, count_of.output_tokens,
           count_of.reasoning_tokens, count_of.total_tokens,
           (SELECT max(asked.create_date)
              FROM ai_message asked
             WHERE asked.conversation_id = m.conversation_id
               AND asked.role = 'user'
               AND asked.create_date <= m.create_date) AS asked_at
      FROM ai_message m
      CROSS JOIN LATERAL (
            SELECT COALESCE(max(n) FILTER (WHERE key = 'input_tokens'), 0) AS input_tokens,
                   COALESCE(max(n) FILTER (WHERE key = 'cached_input_tokens'), 0) AS cached_input_tokens,
                   COALESCE(max(n) FILTER (WHERE key = 'output_tokens'), 0) AS output_tokens,
                   COALESCE(max(n) FILTER (WHERE key = 'reasoning_tokens'), 0) AS reasoning_tokens,
                   COALESCE(max(n) FILTER (WHERE key = 'total_tokens'), 0) AS total_tokens
              FROM (SELECT kv.key, LEAST(GREATEST(kv.value::text::numeric, 0), 1000000000)::integer AS n
                      FROM jsonb_each(
                            CASE WHEN jsonb_typeof(m.usage::jsonb) = 'object' THEN m.usage::jsonb ELSE '{}' END
                           ) AS kv(key, value)
                     WHERE jsonb_typeof(kv.value) = 'number') AS counted
      ) AS count_of
     WHERE m.role = 'assistant' AND m.usage IS NOT NULL
)
INSERT INTO ai_usage (
    date, user_id, company_id, currency_id, assistant_id, provider_id, model_id, model_name,
    cloud_service_id, conversation_id, round, input_tokens, cached_input_tokens,
    output_tokens, reasoning_tokens, total_tokens, cost,
    create_uid, create_date, write_uid, write_date
)
SELECT a.create_date, c.user_id, u.company_id, company.currency_id, c.assistant_id,
       assistant.provider_id, model.id, COALESCE(NULLIF(assistant.model, ''), provider.default_model),
       c.cloud_service_id, c.id, a.rounds, a.input_tokens,
       LEAST(a.cached_input_tokens, a.input_tokens), a.output_tokens,
       LEAST(a.reasoning_tokens, a.output_tokens),
       GREATEST(a.total_tokens, a.input_tokens + a.output_tokens), 0,
       1, now() AT TIME ZONE 'UTC', 1, now() AT TIME ZONE 'UTC'
  FROM answers a
  JOIN ai_conversation c ON c.id = a.conversation_id
  JOIN res_users u ON u.id = c.user_id
  JOIN res_company company ON company.id = u.company_id
  JOIN ai_assistant assistant ON assistant.id = c.assistant_id
  LEFT JOIN ai_provider provider ON provider.id = assistant.provider_id
  LEFT JOIN ai_provider_model model
         ON model.provider_id = assistant.provider_id
        AND model.name = COALESCE(NULLIF(assistant.model, ''), provider.default_model)
 WHERE GREATEST(a.input_tokens, a.output_tokens, a.total_tokens) > 0
   AND NOT EXISTS (
        SELECT 1 FROM ai_usage recorded
         WHERE recorded.conversation_id = a.conversation_id
           AND recorded.date <= a.create_date
           AND recorded.date >= COALESCE(a.asked_at, '-infinity'::timestamp))
"""


def migrate(cr, version):
    cr.execute(INSERT_PAST_USAGE)
    _logger.info("ai_mcp: usage rows made for the answers given before usage was recorded: %s", cr.rowcount)
