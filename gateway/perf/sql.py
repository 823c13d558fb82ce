"""Hand-written statements for the few reads and writes on every API request, with model
instances in and out exactly as the ORM makes them (the same column converters, `from_db`,
`pre_save` and `get_db_prep_save`).

Why: compiling a queryset costs the ORM about as much CPU as a whole bare Django request, and
more than PostgreSQL spends answering it (docs/decisions.md, D1). The statements here are
written once, from the models' own column names, so a new field is picked up by itself.
Everything else keeps the ORM.

Behind one wall: only each app's small writes module (payments.writes) and the platform's key
lookup (gateway.platform.key_lookup) import this module. They offer domain verbs
(payment_insert_with_events, idempotency_key_take, ...), so no service signature carries a type
of this module (tests/gateway/test_perf_wall.py keeps it so).
"""
from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import NamedTuple

from django.db import IntegrityError, connections, router, transaction
from django.db import models
from django.db.models.expressions import Col


def columns(model, alias: str) -> str:
    """`"alias"."column", ...` for every concrete field of `model`, in field order."""
    quote = connections[router.db_for_read(model)].ops.quote_name
    return ", ".join(f"{quote(alias)}.{quote(f.column)}" for f in model._meta.concrete_fields)


@lru_cache(maxsize=None)
def _loader(model, alias: str):
    """The attribute names of `model`'s concrete fields, and for the fields whose values need
    converting on this database, (position, column, converters): worked out once."""
    connection = connections[alias]
    fields = model._meta.concrete_fields
    converters = []
    for position, field in enumerate(fields):
        col = Col(model._meta.db_table, field)
        convs = connection.ops.get_db_converters(col) + col.get_db_converters(connection)
        if convs:
            converters.append((position, col, convs))
    return [f.attname for f in fields], converters


def instance(model, values):
    """A `model` instance from the values of `columns(model, ...)`, as the ORM would load it."""
    alias = router.db_for_read(model)
    attnames, converters = _loader(model, alias)
    if converters:
        values = list(values)
        connection = connections[alias]
        for position, col, convs in converters:
            value = values[position]
            for convert in convs:
                value = convert(value, col, connection)
            values[position] = value
    return model.from_db(alias, attnames, values)


def width(model) -> int:
    return len(model._meta.concrete_fields)


def update_rows(model, objs, fields: list[str]) -> None:
    """`model.objects.bulk_update(objs, fields)` as one `UPDATE ... FROM (VALUES ...)` on
    PostgreSQL. Django's bulk_update builds a CASE expression per row and field, and resolving
    those costs milliseconds of CPU per row; the values here are prepared by the same fields'
    get_db_prep_save and cast to the same column types. Other databases keep bulk_update."""
    if not objs:
        return
    alias = router.db_for_write(model)
    connection = connections[alias]
    if connection.vendor != "postgresql":
        model.objects.using(alias).bulk_update(objs, fields)
        return
    meta = model._meta
    quote = connection.ops.quote_name
    targets = [meta.pk] + [meta.get_field(name) for name in fields]
    names = [quote(f.column) for f in targets]
    params = []
    for obj in objs:
        params.append(meta.pk.get_db_prep_value(obj.pk, connection))
        params.extend(f.get_db_prep_save(getattr(obj, f.attname), connection) for f in targets[1:])
    rows = ", ".join(["(" + ", ".join(["%s"] * len(targets)) + ")"] * len(objs))
    assignments = ", ".join(f"{name} = v.{name}::{f.db_type(connection)}" for name, f in zip(names[1:], targets[1:]))
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {quote(meta.db_table)} AS t SET {assignments} FROM (VALUES {rows}) AS v ({', '.join(names)}) "
            f"WHERE t.{names[0]} = v.{names[0]}::{meta.pk.db_type(connection)}", params)


def update_where(model, where: dict, values: dict) -> int:
    """`model.objects.filter(**where).update(**values)` for plain equality (None: IS NULL) on
    concrete fields, as one hand-written UPDATE; returns the number of rows it changed. Values
    are prepared by the fields' get_db_prep_save, as the ORM's update does (a related field
    takes an instance or its key). Any database."""
    alias = router.db_for_write(model)
    connection = connections[alias]
    meta = model._meta
    quote = connection.ops.quote_name
    sets = [f"{quote(meta.get_field(name).column)} = %s" for name in values]
    params = _saved_values(meta, values, connection)
    conditions, where_params = _conditions(meta, where, connection)
    params.extend(where_params)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {quote(meta.db_table)} SET {', '.join(sets)} WHERE {' AND '.join(conditions)}", params)
        return cursor.rowcount


def insert_rows(model, objs) -> None:
    """`model.objects.bulk_create(objs)` as one multi-row `INSERT ... VALUES` on PostgreSQL,
    setting the primary keys the database generates. Django's bulk_create sends PostgreSQL
    arrays (INSERT ... SELECT FROM UNNEST), which psycopg quotes element by element with
    regular expressions: for rows carrying a JSON body that costs more than all else the
    expiry sweep does. Values go through the fields' pre_save and get_db_prep_save, as in
    bulk_create. Other databases keep bulk_create."""
    if not objs:
        return
    alias = router.db_for_write(model)
    connection = connections[alias]
    if connection.vendor != "postgresql":
        model.objects.using(alias).bulk_create(objs)
        return
    statement, params, generated = _insert_statement(model, objs, connection)
    with connection.cursor() as cursor:
        if generated is None:
            cursor.execute(statement, params)
        else:
            cursor.execute(f"{statement} RETURNING {connection.ops.quote_name(generated.column)}", params)
            for obj, (pk,) in zip(objs, cursor.fetchall()):
                obj.pk = pk
    _mark_saved(objs, alias)


class Claim(NamedTuple):
    """A row of `model` that an insert is made under: the insert happens only while the row
    matches `where` (equality; None is IS NULL), and in the same statement the row gets
    `values` and its ForeignKey `link` pointing at the inserted parent. An idempotency key's
    lease is one: the payment is written only while the lease is still this request's."""
    model: type
    where: dict
    values: dict
    link: str


def insert_with_children(parent, children, *, link: str, claim: Claim | None = None) -> bool:
    """Insert `parent` and then `children` (whose ForeignKey `link` points at it) as one
    statement on PostgreSQL: `WITH p AS (INSERT ... RETURNING id) INSERT INTO child ...`. One
    round trip instead of two, and atomic by itself, so a caller with nothing else to write
    needs no transaction (BEGIN and COMMIT are two more). Primary keys are set on all of them.

    With a `claim`, the claimed row is updated in the same statement and the parent and
    children are inserted only if it matched: False (nothing written) when it did not. Four
    round trips (BEGIN, INSERT, UPDATE, COMMIT) become one. Returns True when inserted.
    Other databases: the same writes in a transaction."""
    parent_model, child_model = type(parent), type(children[0])
    alias = router.db_for_write(parent_model)
    connection = connections[alias]
    if connection.vendor != "postgresql" or parent.pk is not None:
        return _insert_with_children_generic(parent, children, link, claim, alias)
    if claim is None:
        shape, params = None, []
    else:
        shape = (claim.model, tuple(claim.values), tuple((name, value is None) for name, value in claim.where.items()),
                 claim.link)
        params = _claim_params(claim, connection)
    plan = _children_plan(parent_model, child_model, link, len(children), shape, _constants(parent), alias)
    params.extend(_insert_values(parent, plan.parent_fields, plan.parent_plain, connection))
    for child in children:
        params.extend(_insert_values(child, plan.child_fields, plan.child_plain, connection))
    with connection.cursor() as cursor:
        cursor.execute(plan.statement, params)
        returned = cursor.fetchall()
    if not returned:
        return False  # the claim matched nothing, so nothing was inserted
    parent.pk = returned[0][0]
    _mark_saved([parent], alias)
    for child, (_, pk) in zip(children, returned):
        setattr(child, link, parent)
        child.pk = pk
    _mark_saved(children, alias)
    return True


class _ChildrenPlan(NamedTuple):
    statement: str
    parent_fields: tuple
    parent_plain: tuple
    child_fields: tuple
    child_plain: tuple


def _constants(obj) -> tuple[tuple[str, object], ...]:
    """(attname, value) for each field of `obj` whose value its INSERT writes without a
    parameter: None of a nullable field with no default in the database (Django gives a column
    one only for db_default), left out, so the column is NULL; and the empty string of a text
    field (_constant_candidates), written as the literal ''. A payment has about 45 values, most of
    them empty at creation; without a parameter each, its statement stays within psycopg's
    cache of converted statements (50 parameters), past which psycopg parses the whole text
    again on every call. The constants are part of the cached plan's shape."""
    found = []
    for name, empty in _constant_candidates(type(obj)):
        value = getattr(obj, name)
        if value is None if empty is None else (type(value) is str and value == ""):
            found.append((name, empty))
    return tuple(found)


# Django's text fields whose get_db_prep_save stores '' as ''. (GenericIPAddressField is not one:
# it stores '' as NULL.)
_EMPTY_AS_GIVEN = (models.CharField, models.TextField, models.EmailField, models.URLField, models.SlugField)


@lru_cache(maxsize=64)
def _constant_candidates(model) -> tuple[tuple[str, object], ...]:
    """(attname, None) for `model`'s nullable fields with no database default and no pre_save
    that fills them in (auto_now, auto_now_add); (attname, "") for its text fields of Django's
    own kinds that store a string as given (_EMPTY_AS_GIVEN; not any subclass, which may
    prepare '' otherwise, as an encrypted field would)."""
    meta = model._meta
    found = []
    for f in meta.concrete_fields:
        if f is meta.pk or getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            continue
        if f.null and f.db_default is models.NOT_PROVIDED:
            found.append((f.attname, None))
        elif type(f) in _EMPTY_AS_GIVEN and not f.null:
            found.append((f.attname, ""))
    return tuple(found)


def _columns(fields, constants: tuple) -> tuple[tuple, tuple, frozenset]:
    """Of `fields`: the columns an INSERT names (those left NULL by `constants` dropped), the
    fields whose parameters fill it (those written as '' dropped too), and the attnames
    written as ''."""
    omitted = {name for name, value in constants if value is None}
    empty = frozenset(name for name, value in constants if value == "")
    columns = tuple(f for f in fields if f.attname not in omitted)
    return columns, tuple(f for f in columns if f.attname not in empty), empty


@lru_cache(maxsize=64)
def _children_plan(parent_model, child_model, link: str, count: int, claim_shape, constants: tuple,
                   alias: str) -> _ChildrenPlan:
    """insert_with_children's statement for `count` children (and a claim of `claim_shape`:
    its model, the names of its values, its conditions' names and whether each is IS NULL,
    its link), the parent's `constants` written without parameters (_constants), and the
    fields whose values fill it, in order: written once."""
    connection = connections[alias]
    quote = connection.ops.quote_name
    parent_meta, child_meta = parent_model._meta, child_model._meta
    pk_column = quote(parent_meta.pk.column)
    fk = child_meta.get_field(link)
    child_fields = tuple(f for f in child_meta.concrete_fields if f is not child_meta.pk and f is not fk)
    child_columns = ", ".join(quote(f.column) for f in [fk, *child_fields])
    returning = f"RETURNING {quote(fk.column)}, {quote(child_meta.pk.column)}"
    if claim_shape is None:
        parent_sql, parent_fields, _ = _insert_text(parent_model, 1, True, alias, constants)
        row = "((SELECT " + pk_column + " FROM p), " + ", ".join(["%s"] * len(child_fields)) + ")"
        statement = (f"WITH p AS ({parent_sql} RETURNING {pk_column}) "
                     f"INSERT INTO {quote(child_meta.db_table)} ({child_columns}) VALUES {', '.join([row] * count)} "
                     f"{returning}")
    else:
        # c: the claim, which draws the parent's key from its sequence when it matches;
        # p: the parent with that key, one row or none; then the children, from p's row.
        claim_model, value_names, where_shape, claim_link = claim_shape
        claim_meta = claim_model._meta
        link_column = quote(claim_meta.get_field(claim_link).column)
        sets = [f"{quote(claim_meta.get_field(name).column)} = %s" for name in value_names]
        sets.append(f"{link_column} = nextval(pg_get_serial_sequence('{quote(parent_meta.db_table)}', "
                    f"'{parent_meta.pk.column}'))")
        conditions = [_condition(quote, _field(claim_meta, name), is_null) for name, is_null in where_shape]
        parent_columns, parent_fields, empty = _columns(
            [f for f in parent_meta.concrete_fields if f is not parent_meta.pk], constants)
        parent_values = ", ".join("''" if f.attname in empty else _casts((f,), connection) for f in parent_columns)
        select = f"SELECT p.{pk_column}, {_casts(child_fields, connection)} FROM p"
        statement = (f"WITH c AS (UPDATE {quote(claim_meta.db_table)} SET {', '.join(sets)} "
                     f"WHERE {' AND '.join(conditions)} RETURNING {link_column}), "
                     f"p AS (INSERT INTO {quote(parent_meta.db_table)} "
                     f"({pk_column}, {', '.join(quote(f.column) for f in parent_columns)}) "
                     f"SELECT c.{link_column}, {parent_values} FROM c RETURNING {pk_column}) "
                     f"INSERT INTO {quote(child_meta.db_table)} ({child_columns}) {' UNION ALL '.join([select] * count)} "
                     f"{returning}")
    return _ChildrenPlan(statement, parent_fields, _plain_types(parent_fields, alias),
                         child_fields, _plain_types(child_fields, alias))


class _ClaimMissed(Exception):
    pass


def _insert_with_children_generic(parent, children, link: str, claim: Claim | None, alias: str) -> bool:
    try:
        with transaction.atomic(using=alias):
            insert_rows(type(parent), [parent])
            for child in children:
                setattr(child, link, parent)
            insert_rows(type(children[0]), children)
            if claim is not None and not update_where(claim.model, claim.where, {**claim.values, claim.link: parent}):
                raise _ClaimMissed()
    except _ClaimMissed:
        for obj in (parent, *children):  # rolled back: as they were before the insert
            obj.pk = None
            obj._state.adding = True
        return False
    return True


def _claim_params(claim: Claim, connection) -> list:
    """The parameters of the claim's UPDATE in _children_plan: its values (prepared as the
    ORM's update prepares them), then its conditions'."""
    meta = claim.model._meta
    return _saved_values(meta, claim.values, connection) + _conditions(meta, claim.where, connection)[1]


def _saved_values(meta, values: dict, connection) -> list:
    """Each of `values` as the ORM's update prepares it for its field (get_db_prep_save)."""
    prepared = []
    for name, value in values.items():
        field = meta.get_field(name)
        prepared.append(field.get_db_prep_save(_key_if_instance(field, value), connection))
    return prepared


def _key_if_instance(field, value):
    """A related field may be given an instance: its key."""
    return value.pk if field.is_relation and hasattr(value, "_meta") else value


def _field(meta, name: str):
    """The field `name` of `meta`'s model; "pk" is its primary key."""
    return meta.pk if name == "pk" else meta.get_field(name)


def _condition(quote, field, is_null: bool) -> str:
    return f"{quote(field.column)} IS NULL" if is_null else f"{quote(field.column)} = %s"


def _conditions(meta, where: dict, connection) -> tuple[list[str], list]:
    """`column = %s` (or `column IS NULL` for None) for each of `where`, and the parameters."""
    quote = connection.ops.quote_name
    conditions, params = [], []
    for name, value in where.items():
        field = _field(meta, name)
        value = _key_if_instance(field, value)
        conditions.append(_condition(quote, field, value is None))
        if value is not None:
            params.append(field.get_db_prep_value(value, connection))
    return conditions, params


def _casts(fields: tuple, connection) -> str:
    """`%s::type, ...` for `fields`: in `INSERT ... SELECT` a parameter takes no type from its
    column, so each is cast to its column's own."""
    return ", ".join(f"%s::{f.db_type(connection)}" for f in fields)


class Exists(NamedTuple):
    """A question for the database: is there a row of `model` matching `where` (equality;
    None is IS NULL; a related instance stands for its key)?"""
    model: type
    where: dict


def exists(question: Exists) -> bool:
    """The answer to `question`, as one `SELECT EXISTS (...)`."""
    alias = router.db_for_read(question.model)
    connection = connections[alias]
    text, params = _exists_text(question, connection)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {text}", params)
        return bool(cursor.fetchone()[0])


def _exists_text(question: Exists, connection) -> tuple[str, list]:
    conditions, params = _conditions(question.model._meta, question.where, connection)
    table = connection.ops.quote_name(question.model._meta.db_table)
    return f"EXISTS (SELECT 1 FROM {table} WHERE {' AND '.join(conditions)})", params


def insert_unless_taken(model, obj, question: Exists | None = None, *,
                        flush_to_disk: bool = True) -> tuple[bool, bool | None]:
    """Insert `obj` unless a row already holds one of its unique values: (inserted, answer),
    with `obj.pk` set when inserted. One `INSERT ... ON CONFLICT DO NOTHING` on PostgreSQL,
    where the ORM needs a transaction and a savepoint to survive the IntegrityError; other
    databases do exactly that.

    `question`, if given, is answered in the same statement (in its RETURNING list, so a
    request that needs both makes one round trip; it sees the tables as they were before the
    insert). The answer is None when nothing was inserted or nothing was asked. Other
    databases ask it right after the insert.

    flush_to_disk=False, outside any transaction on PostgreSQL: the statement commits
    asynchronously (synchronous_commit off for its own transaction only), so it does not wait
    for the WAL to reach the disk. Other sessions see the row at once, as always; only a
    database crash in the next fraction of a second can lose it, and the next durable commit
    of any session makes it durable too (the WAL is written in order). For rows whose loss in
    a crash costs nothing, such as an idempotency key's in-flight lease. Inside a transaction
    the flag is ignored: it would make the whole transaction's commit asynchronous."""
    alias = router.db_for_write(model)
    connection = connections[alias]
    if connection.vendor != "postgresql":
        try:
            with transaction.atomic(using=alias):
                obj.save(force_insert=True, using=alias)
        except IntegrityError:
            return False, None
        return True, None if question is None else exists(question)
    statement, params, generated = _insert_statement(model, [obj], connection)
    returning = connection.ops.quote_name((generated or model._meta.pk).column)
    if question is not None:
        text, question_params = _exists_text(question, connection)
        returning += ", " + text
        params.extend(question_params)
    if not flush_to_disk and not connection.in_atomic_block:
        # Set for this statement's own transaction as the row is returned, before its commit:
        # one round trip, where BEGIN, SET LOCAL, INSERT and COMMIT would be four. (No row, no
        # write: a conflict has nothing to flush.)
        returning += ", set_config('synchronous_commit', 'off', true)"
    with connection.cursor() as cursor:
        cursor.execute(f"{statement} ON CONFLICT DO NOTHING RETURNING {returning}", params)
        row = cursor.fetchone()
    if row is None:
        return False, None
    obj.pk = row[0]
    _mark_saved([obj], alias)
    return True, None if question is None else bool(row[1])


def _insert_statement(model, objs, connection):
    """The multi-row INSERT of `objs` and its parameters, and the primary key field when the
    database generates it (None when every object has its own)."""
    meta = model._meta
    generated = meta.pk if meta.pk.db_returning and all(obj.pk is None for obj in objs) else None
    statement, fields, plain = _insert_text(model, len(objs), generated is not None, connection.alias)
    params = []
    for obj in objs:
        params.extend(_insert_values(obj, fields, plain, connection))
    return statement, params, generated


# Fields whose pre_save is reading the attribute and whose get_db_prep_save hands a value of
# this type to the driver unchanged (integers wrapped in the database's integer type, as
# connection.ops.adapt_integerfield_value does). Exact field classes: a subclass may convert.
_PLAIN_FIELD_TYPES = {
    models.CharField: str, models.TextField: str, models.EmailField: str, models.SlugField: str,
    models.IntegerField: int, models.BigIntegerField: int, models.SmallIntegerField: int,
    models.PositiveIntegerField: int, models.PositiveBigIntegerField: int, models.PositiveSmallIntegerField: int,
    models.AutoField: int, models.BigAutoField: int, models.BooleanField: bool, models.ForeignKey: int,
}


@lru_cache(maxsize=256)
def _plain_types(fields: tuple, alias: str) -> tuple:
    """For each field, (type, wrap) when a value of that type goes to the driver as it is
    (wrapped by `wrap` when not None), or None for the generic path."""
    connection = connections[alias]
    ops = connection.ops
    plain = []
    for f in fields:
        kind, wrap = _PLAIN_FIELD_TYPES.get(type(f)), None
        if type(f) is models.DateTimeField and not (f.auto_now or f.auto_now_add) and connection.vendor == "postgresql":
            # PostgreSQL takes an aware datetime as it is (adapt_datetimefield_value); a naive
            # one takes the generic path, which warns and makes it aware.
            kind = datetime
        if kind is int:
            # psycopg 3 sends Int2/Int4/Int8 by the column's type (a foreign key: its target's);
            # a column type without one in the map (a non-integer key) takes the generic path.
            column = f.target_field if type(f) is models.ForeignKey else f
            wrap = getattr(ops, "integerfield_type_map", {}).get(column.get_internal_type())
            kind = kind if wrap is not None else None
        plain.append(None if kind is None else (kind, wrap))
    return tuple(plain)


def _insert_values(obj, fields, plain, connection) -> list:
    """`f.get_db_prep_save(f.pre_save(obj, True), connection)` for each field, as the ORM's
    INSERT computes them, skipping the five calls for a str (choices' members included), an
    int, a bool or (on PostgreSQL) an aware datetime already of its field's type: a payment
    with its events has about 45 values, and the generic path cost creation near a tenth of
    its CPU."""
    values = []
    for f, fast in zip(fields, plain):
        if fast is not None:
            value = getattr(obj, f.attname)
            kind, wrap = fast
            if value is None:
                values.append(None)
                continue
            of_its_type = type(value) is kind or (kind is str and isinstance(value, str))
            if of_its_type and (kind is not datetime or value.tzinfo is not None):  # naive: the ORM's path
                values.append(value if wrap is None else wrap(value))
                continue
        values.append(f.get_db_prep_save(f.pre_save(obj, True), connection))
    return values


@lru_cache(maxsize=256)
def _insert_text(model, count: int, pk_generated: bool, alias: str, constants: tuple = ()):
    """The text of an INSERT of `count` rows of `model` (with `constants` written without
    parameters: _constants), the fields whose parameters fill it and their _plain_types:
    written once."""
    meta = model._meta
    columns, fields, empty = _columns([f for f in meta.concrete_fields if not (pk_generated and f is meta.pk)],
                                      constants)
    quote = connections[alias].ops.quote_name
    rows = ", ".join(["(" + ", ".join("''" if f.attname in empty else "%s" for f in columns) + ")"] * count)
    text = f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in columns)}) VALUES {rows}"
    return text, fields, _plain_types(fields, alias)


def _mark_saved(objs, alias: str) -> None:
    for obj in objs:
        obj._state.adding = False
        obj._state.db = alias
