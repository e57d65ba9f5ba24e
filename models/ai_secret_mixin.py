"""Write-only secrets kept out of the ORM, the way res.users keeps its password.

A model lists its secret fields in `_secret_fields`. Each one is a non-stored computed field that
always reads empty, whose inverse encrypts what is written and stores the ciphertext with SQL in a
column `<field>_secret` that is no ORM field at all: read, web_read, search_read, export and
onchange cannot return it to anyone, administrators included. `<field>_set` tells whether a value
is stored. Writing an empty value keeps the stored one; `_secret_clear()` removes it.

Only the code that connects decrypts, through `_secret_value()`.

A concrete model declares, per secret field `x`:

    x = fields.Char(compute="_compute_x", inverse="_inverse_x", copy=False)
    x_set = fields.Boolean(compute="_compute_secrets_set")

    def _compute_x(self):
        self._secret_compute("x")

    def _inverse_x(self):
        self._secret_inverse("x")
"""

from __future__ import annotations

from odoo import api, models
from odoo.exceptions import ValidationError
from odoo.tools import SQL

from ..notify import config_error_text
from ..services.errors import AiMcpError, ConfigError
from ..services.secret_box import SecretBox, SecretBoxError


class AiSecretMixin(models.AbstractModel):
    _name = "ai.secret.mixin"
    _description = "Write-only Encrypted Secrets"

    # names of the write-only fields of the concrete model
    _secret_fields: tuple[str, ...] = ()

    def init(self):
        super().init()
        if self._abstract or not self._auto:
            return
        for fname in self._secret_fields:
            self.env.cr.execute(
                SQL(
                    "ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s TEXT",
                    SQL.identifier(self._table),
                    SQL.identifier(self._secret_column(fname)),
                )
            )

    # -- fields ----------------------------------------------------------------------------------

    @api.model
    def _fields_changed_by(self, vals, fnames):
        """The fields of `fnames` a write of `vals` changes: an empty secret keeps the stored one,
        so it changes nothing."""
        return {f for f, v in vals.items() if f in fnames and (v or f not in self._secret_fields)}

    def _secret_compute(self, fname):
        for record in self:
            record[fname] = False

    def _secret_inverse(self, fname):
        values = {record.id: record[fname] for record in self}
        box = None
        for record in self:
            value = values[record.id]
            if not value or not isinstance(record.id, int):
                continue  # empty keeps what is stored
            try:
                value = record._secret_normalize(fname, value)
            except ConfigError as exc:
                raise ValidationError(config_error_text(record, exc)) from None
            except AiMcpError as exc:
                raise ValidationError(exc.message) from None
            box = box or self._secret_box()
            self._secret_store(record.id, fname, box.encrypt(value))
        # the plaintext must not stay in the cache, where a read in this transaction would find it
        self.invalidate_recordset([fname, f"{fname}_set"])

    def _compute_secrets_set(self):
        stored = self._secret_presence()
        for record in self:
            present = stored.get(record._origin.id, ())
            for fname in self._secret_fields:
                record[f"{fname}_set"] = fname in present

    # -- helpers ---------------------------------------------------------------------------------

    @api.model
    def _secret_column(self, fname):
        if fname not in self._secret_fields:
            raise ValueError(f"{fname!r} is not a secret field of {self._name}")
        return f"{fname}_secret"

    @api.model
    def _secret_box(self):
        secret = self.env["ir.config_parameter"].sudo().get_param("database.secret")
        if not secret:
            raise ValidationError(
                self.env._(
                    "The database has no secret (system parameter database.secret), so secrets cannot be encrypted."
                )
            )
        return SecretBox(secret)

    def _secret_normalize(self, fname, value):
        """The text to store for `value`; raise ConfigError to refuse it. Override per field."""
        return value.strip() if isinstance(value, str) else value

    def _secret_store(self, record_id, fname, token):
        self.env.cr.execute(
            SQL(
                "UPDATE %s SET %s = %s WHERE id = %s",
                SQL.identifier(self._table),
                SQL.identifier(self._secret_column(fname)),
                token,
                record_id,
            )
        )

    def _secret_presence(self):
        """{id: {names of the secret fields holding a value}} for the stored records of self."""
        ids = [rid for rid in self._origin.ids if isinstance(rid, int)]
        if not ids or not self._secret_fields:
            return {}
        columns = [SQL.identifier(self._secret_column(f)) for f in self._secret_fields]
        rows = self.env.execute_query(
            SQL(
                "SELECT id, %s FROM %s WHERE id = ANY(%s)",
                SQL(", ").join(SQL("(%s IS NOT NULL AND %s <> '')", c, c) for c in columns),
                SQL.identifier(self._table),
                ids,
            )
        )
        return {row[0]: {f for f, present in zip(self._secret_fields, row[1:], strict=True) if present} for row in rows}

    def _secret_value(self, fname):
        """The secret in clear, '' when none is stored. Only for the code that connects.

        Raises ConfigError when the stored value cannot be decrypted."""
        self.ensure_one()
        rows = self.env.execute_query(
            SQL(
                "SELECT %s FROM %s WHERE id = %s",
                SQL.identifier(self._secret_column(fname)),
                SQL.identifier(self._table),
                self.id,
            )
        )
        token = rows[0][0] if rows else None
        if not token:
            return ""
        try:
            return self._secret_box().decrypt(token)
        except SecretBoxError as exc:
            label = self._fields[fname].get_description(self.env)["string"]
            raise ConfigError(fname, f"{exc}. Enter the {label} again.") from None

    def _secret_clear(self, fname):
        self.check_access("write")
        for record in self:
            self._secret_store(record.id, fname, None)
        self.invalidate_recordset([f"{fname}_set"])
        return True

    def copy(self, default=None):
        new_records = super().copy(default)
        for old, new in zip(self, new_records, strict=True):
            for fname in self._secret_fields:
                column = SQL.identifier(self._secret_column(fname))
                self.env.cr.execute(
                    SQL(
                        "UPDATE %s SET %s = (SELECT %s FROM %s WHERE id = %s) WHERE id = %s",
                        SQL.identifier(self._table),
                        column,
                        column,
                        SQL.identifier(self._table),
                        old.id,
                        new.id,
                    )
                )
        new_records.invalidate_recordset([f"{fname}_set" for fname in self._secret_fields])
        return new_records
