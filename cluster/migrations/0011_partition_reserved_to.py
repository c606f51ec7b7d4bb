# A partition's offset reservation (issue 33): the floor a Redis loss restores to.
# db_default: the bulk insert of a new topic's rows (adapters/partition_rows.py) names
# its columns and leaves this one to the database.
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('cluster', '0010_tick_health'),
    ]

    operations = [
        migrations.AddField(
            model_name='partition',
            name='reserved_to',
            field=models.BigIntegerField(default=0, db_default=0),
        ),
    ]
